#pragma once
// UTF-8 checks: JSON, where lengen records paths and settings, holds UTF-8 text only.
#include <string>

namespace lengen {

// Whether `text` is well-formed UTF-8: no stray or cut sequences, no overlong forms, no
// surrogates, nothing past U+10FFFF.
bool is_utf8(const std::string& text);

}  // namespace lengen
