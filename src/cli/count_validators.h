#pragma once
// Checks of whole-number options whose messages a user can read: CLI11's own PositiveNumber and
// NonNegativeNumber accept 2.5 for an integer option's text and report their range as "0 to
// 1.8e308". Either says "--threads: 0 is not a positive whole number".
#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdlib>
#include <string>

namespace lengen::cli {

namespace detail {

inline CLI::Validator whole_number_at_least(long long minimum, const std::string& what,
                                            const std::string& name) {
  return CLI::Validator(
      [minimum, what](std::string& text) -> std::string {
        errno = 0;
        char* end = nullptr;
        const long long value = std::strtoll(text.c_str(), &end, 10);
        const bool whole = !text.empty() && end == text.c_str() + text.size() && errno == 0;
        if (whole && value >= minimum) return "";
        return "'" + text + "' is not " + what;
      },
      name);
}

}  // namespace detail

// 1, 2, ...
inline CLI::Validator positive_count() {
  return detail::whole_number_at_least(1, "a positive whole number", "POSITIVE");
}

// 0, 1, ...
inline CLI::Validator non_negative_count() {
  return detail::whole_number_at_least(0, "a whole number, 0 or more", "NONNEGATIVE");
}

}  // namespace lengen::cli
