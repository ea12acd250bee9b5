#pragma once
// The names of an enum's values: an enum E declares `const std::vector<NamedValue<E>>&
// named_values(E)` beside itself, found here by argument-dependent lookup.
#include <string>
#include <vector>

namespace lengen {

template <class E>
struct NamedValue {
  const char* name;
  E value;
};

// Declares E's table: LENGEN_NAMED_VALUES(E, {"a", E::kA}, {"b", E::kB}).
#define LENGEN_NAMED_VALUES(E, ...)                              \
  inline const std::vector<NamedValue<E>>& named_values(E) {     \
    static const std::vector<NamedValue<E>> values = {__VA_ARGS__}; \
    return values;                                               \
  }

// The name of `value` in its table ("" for a value the table lacks, which a switch would catch).
template <class E>
std::string name_of(E value) {
  for (const NamedValue<E>& entry : named_values(E{})) {
    if (entry.value == value) return entry.name;
  }
  return "";
}

// Every name of E, in the table's order.
template <class E>
std::vector<std::string> names_of() {
  std::vector<std::string> names;
  for (const NamedValue<E>& entry : named_values(E{})) names.emplace_back(entry.name);
  return names;
}

// The value named `name`, or nullptr.
template <class E>
const E* value_named(const std::string& name) {
  for (const NamedValue<E>& entry : named_values(E{})) {
    if (entry.name == name) return &entry.value;
  }
  return nullptr;
}

}  // namespace lengen
