#pragma once
// Checks of numeric options that say "--threads: '0' is not a whole number from 1 to 1024" (CLI11's
// own accept 2.5 for an integer option and report their range as "0 to 1.8e308").
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

namespace lengen::cli {

// The longest source length and the most samples per length any command takes, as eval.lengths
// and eval.samples allow; the bounds of the bench commands' threads, rounds and model parts.
constexpr long long kMaxLength = 1 << 20;
constexpr long long kMaxSamples = 1 << 20;
constexpr long long kMaxBenchThreads = 1024;
constexpr long long kMaxBenchRepeats = 1000;
constexpr long long kMaxModelPart = 1 << 16;

// Text that reads whole as a number from `minimum` to `maximum` (long double holds every 64-bit
// integer), without a fraction or exponent when `whole`; otherwise "'TEXT' is not WHAT".
inline CLI::Validator number_in(long double minimum, long double maximum, bool whole,
                                const std::string& what) {
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        errno = 0;
        char* end = nullptr;
        const long double value = std::strtold(text.c_str(), &end);
        const bool ok = !text.empty() && end == text.c_str() + text.size() && errno == 0 &&
                        text.find_first_of(whole ? " .eExXnN" : " xXnN") == std::string::npos &&
                        value >= minimum && value <= maximum;
        return ok ? "" : "'" + text + "' is not " + what;
      },
      "");
}

inline CLI::Validator count_up_to(long long maximum) {
  return number_in(1, maximum, true, "a whole number from 1 to " + std::to_string(maximum));
}
inline CLI::Validator positive_count() { return number_in(1, LLONG_MAX, true, "a positive whole number"); }
inline CLI::Validator non_negative_count() {
  return number_in(0, LLONG_MAX, true, "a whole number, 0 or more");
}
// task.seed and train.seed take 0 to 2^64 - 1.
inline CLI::Validator seed_value() {
  return number_in(0, 18446744073709551615.0L, true, "a whole number from 0 to 18446744073709551615");
}
// A bound keeps a deadline computed from it inside the clock's range.
inline CLI::Validator seconds_up_to(long long maximum) {
  return number_in(0, maximum, false, "a number of seconds from 0 to " + std::to_string(maximum));
}

// `--NAME 64,128,256` into `target`, each item checked by `item_check`; an empty item is named
// ("item 2 of '8,,16' is empty"), where CLI11's own delimiter would drop it without a word.
inline CLI::Option* add_count_list_option(CLI::App* command, const std::string& name,
                                          std::vector<int64_t>& target, const std::string& help,
                                          const CLI::Validator& item_check) {
  const auto parse = [&target, item_check, name](const std::string& text) {
    target.clear();
    for (size_t start = 0, i = 1;; ++i) {
      const size_t comma = std::min(text.find(',', start), text.size());
      std::string item = text.substr(start, comma - start);
      const std::string problem = item.empty() ? "is empty" : item_check(item);
      if (!problem.empty() && start == 0 && comma == text.size()) throw CLI::ValidationError(name, problem);
      if (!problem.empty()) {
        throw CLI::ValidationError(
            name, "item " + std::to_string(i) + " of '" + text + "'" + (item.empty() ? " " : ": ") + problem);
      }
      target.push_back(std::strtoll(item.c_str(), nullptr, 10));
      if (comma == text.size()) return;
      start = comma + 1;
    }
  };
  return command->add_option_function<std::string>(name, parse, help);
}

}  // namespace lengen::cli
