#include "lengen/content_hash.h"

#include <cstdio>
#include <fstream>
#include <vector>

#include "lengen/errors.h"

namespace lengen {

void ContentHash::add(const void* data, size_t size) {
  constexpr uint64_t kPrime = 1099511628211ull;
  const auto* bytes = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < size; ++i) state_ = (state_ ^ bytes[i]) * kPrime;
}

void ContentHash::add_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UserError("cannot read " + path);
  std::vector<char> buffer(1 << 16);
  while (in.read(buffer.data(), static_cast<std::streamsize>(buffer.size())) || in.gcount() > 0) {
    add(buffer.data(), static_cast<size_t>(in.gcount()));
  }
}

std::string ContentHash::hex() const {
  char text[17];
  std::snprintf(text, sizeof(text), "%016llx", static_cast<unsigned long long>(state_));
  return text;
}

}  // namespace lengen
