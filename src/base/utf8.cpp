#include "lengen/utf8.h"

#include <cstdint>

namespace lengen {

bool is_utf8(const std::string& text) {
  size_t i = 0;
  while (i < text.size()) {
    const auto byte = static_cast<unsigned char>(text[i]);
    // The length of the sequence a lead byte starts, and the smallest code point it may encode
    // (a longer form of a smaller one is not UTF-8).
    size_t length = 0;
    uint32_t code = 0, smallest = 0;
    if (byte < 0x80) {
      ++i;
      continue;
    } else if ((byte & 0xe0) == 0xc0) {
      length = 2, code = byte & 0x1f, smallest = 0x80;
    } else if ((byte & 0xf0) == 0xe0) {
      length = 3, code = byte & 0x0f, smallest = 0x800;
    } else if ((byte & 0xf8) == 0xf0) {
      length = 4, code = byte & 0x07, smallest = 0x10000;
    } else {
      return false;
    }
    if (i + length > text.size()) return false;
    for (size_t k = 1; k < length; ++k) {
      const auto next = static_cast<unsigned char>(text[i + k]);
      if ((next & 0xc0) != 0x80) return false;
      code = (code << 6) | (next & 0x3f);
    }
    if (code < smallest || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return false;
    i += length;
  }
  return true;
}

}  // namespace lengen
