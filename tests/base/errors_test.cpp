// A user error is one printable line whatever the user's input held.
#include "lengen/errors.h"

#include <gtest/gtest.h>

#include <string>

namespace lengen {
namespace {

TEST(UserError, ControlCharactersAreShownNotObeyed) {
  const std::string key = std::string("na") + '\0' + "me\n\t\x7f";
  EXPECT_EQ(std::string(UserError("unknown key '" + key + "'").what()),
            "unknown key 'na\\x00me\\x0a\\x09\\x7f'");
}

TEST(UserError, PrintableTextAndUtf8AreKeptAsTheyAre) {
  const std::string text = "config C:\\runs/été 'x' = \"1\"";
  EXPECT_EQ(std::string(UserError(text).what()), text);
  EXPECT_EQ(printable(printable(std::string(1, '\0'))), "\\x00");
}

// A command in a record or message pastes back into a shell as typed.
TEST(UserError, ShellWordsQuoteOnlyWhatTheShellWouldRead) {
  EXPECT_EQ(shell_word("train.seed=1,2"), "train.seed=1,2");
  EXPECT_EQ(shell_word(R"(method={"name":"a b"})"), R"('method={"name":"a b"}')");
  EXPECT_EQ(shell_word("it's"), R"('it'\''s')");
  EXPECT_EQ(shell_word(""), "''");
}

}  // namespace
}  // namespace lengen
