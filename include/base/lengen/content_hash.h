#pragma once
// A 64-bit FNV-1a hash: a short, stable fingerprint of files and weights for provenance in
// results.json (not a defence against deliberate collisions).
#include <cstddef>
#include <cstdint>
#include <string>

namespace lengen {

class ContentHash {
 public:
  void add(const void* data, size_t size);
  void add(const std::string& text) { add(text.data(), text.size()); }
  // Feeds the file's bytes; a file that cannot be read throws UserError naming it.
  void add_file(const std::string& path);
  std::string hex() const;  // 16 hex digits

 private:
  uint64_t state_ = 14695981039346656037ull;
};

}  // namespace lengen
