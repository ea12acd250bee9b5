#include "lengen/utf8.h"

#include <gtest/gtest.h>

#include <string>

#include "lengen/errors.h"

namespace lengen {
namespace {

TEST(Utf8, WellFormedTextOnly) {
  for (const std::string good : {"", "runs/copy", "été", "运行", "\xf0\x9f\x98\x80"})
    EXPECT_TRUE(is_utf8(good)) << good;
  // A stray byte, a cut sequence, an overlong form, a surrogate, past U+10FFFF.
  for (const std::string bad : {"u8\xff"
                                "dir",
                                "\xc3", "\xe8\xbf", "\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80"}) {
    EXPECT_FALSE(is_utf8(bad)) << printable(bad);
  }
}

}  // namespace
}  // namespace lengen
