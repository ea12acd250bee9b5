#pragma once
// Checks of numeric options whose messages a user can read: CLI11's own PositiveNumber and
// NonNegativeNumber accept 2.5 for an integer option's text and report their range as "0 to
// 1.8e308". These say "--threads: '0' is not a positive whole number".
#include <CLI/CLI.hpp>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

namespace lengen::cli {

namespace detail {

// Accepts text that `parse` (strtoll- or strtod-like) reads whole and `accept` takes; otherwise
// "'TEXT' is not WHAT".
template <class Parse, class Accept>
CLI::Validator number_check(Parse parse, Accept accept, const std::string& what, const std::string& name) {
  return CLI::Validator(
      [parse, accept, what](std::string& text) -> std::string {
        errno = 0;
        char* end = nullptr;
        const auto value = parse(text.c_str(), &end);
        const bool whole = !text.empty() && end == text.c_str() + text.size() && errno == 0;
        if (whole && accept(value)) return "";
        return "'" + text + "' is not " + what;
      },
      name);
}

inline CLI::Validator whole_number_in(long long minimum, long long maximum, const std::string& what,
                                      const std::string& name) {
  return number_check([](const char* text, char** end) { return std::strtoll(text, end, 10); },
                      [minimum, maximum](long long value) { return value >= minimum && value <= maximum; },
                      what, name);
}

}  // namespace detail

// 1, 2, ...
inline CLI::Validator positive_count() {
  return detail::whole_number_in(1, LLONG_MAX, "a positive whole number", "POSITIVE");
}

// 1, 2, ..., maximum
inline CLI::Validator count_up_to(long long maximum) {
  return detail::whole_number_in(1, maximum, "a whole number from 1 to " + std::to_string(maximum),
                                 "1.." + std::to_string(maximum));
}

// Bounds of the bench commands' counts: threads as train.threads allows; rounds enough for any
// measurement, few enough to end.
constexpr long long kMaxBenchThreads = 1024;

// The longest source length and the most samples per length any command takes, as eval.lengths
// and eval.samples allow: beyond them a run would only fail later, allocating.
constexpr long long kMaxLength = 1 << 20;
constexpr long long kMaxSamples = 1 << 20;
constexpr long long kMaxBenchRepeats = 1000;
// A width or count of a benchmarked model's parts: the bound of model.* in the config.
constexpr long long kMaxModelPart = 1 << 16;

// 0, 1, ...
inline CLI::Validator non_negative_count() {
  return detail::whole_number_in(0, LLONG_MAX, "a whole number, 0 or more", "NONNEGATIVE");
}

// A seed: 0 to 2^64 - 1, as task.seed and train.seed take (strtoull would read "-1" as 2^64 - 1).
inline CLI::Validator seed_value() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        errno = 0;
        char* end = nullptr;
        std::strtoull(text.c_str(), &end, 10);
        const bool whole = !text.empty() && text.front() != '-' && text.front() != '+' &&
                           text.front() != ' ' && end == text.c_str() + text.size() && errno == 0;
        return whole ? "" : "'" + text + "' is not a whole number from 0 to 18446744073709551615";
      },
      "SEED");
}

// A duration in seconds from 0 to `maximum` (fractions allowed): a bound keeps a deadline computed
// from it inside the clock's range.
inline CLI::Validator seconds_up_to(double maximum) {
  return detail::number_check(
      [](const char* text, char** end) { return std::strtod(text, end); },
      [maximum](double value) { return std::isfinite(value) && value >= 0 && value <= maximum; },
      "a number of seconds from 0 to " + std::to_string(static_cast<long long>(maximum)), "SECONDS");
}

// The items of a comma-separated list, empty ones kept ("8,,16" has three), so that a check
// can name the empty one: CLI11's own delimiter drops it without a word.
inline std::vector<std::string> comma_items(const std::string& text) {
  std::vector<std::string> items;
  size_t start = 0;
  for (size_t comma = text.find(','); comma != std::string::npos; comma = text.find(',', start)) {
    items.push_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  items.push_back(text.substr(start));
  return items;
}

// A comma-separated list whose every item passes `item_check`: "item 2 of '8,,16' is empty".
inline CLI::Validator list_of(const CLI::Validator& item_check) {
  return CLI::Validator(
      [item_check](std::string& text) -> std::string {
        const std::vector<std::string> items = comma_items(text);
        for (size_t i = 0; i < items.size(); ++i) {
          std::string item = items[i];
          const std::string where = "item " + std::to_string(i + 1) + " of '" + text + "'";
          if (item.empty()) return where + " is empty";
          const std::string problem = item_check(item);
          if (!problem.empty()) return items.size() == 1 ? problem : where + ": " + problem;
        }
        return "";
      },
      item_check.get_description() + ",...");
}

// `--NAME 64,128,256` into `target`, each item checked by `item_check` (a whole-number check
// above) and none of them empty. Given once: the list is one value.
inline CLI::Option* add_count_list_option(CLI::App* command, const std::string& name,
                                          std::vector<int64_t>& target, const std::string& help,
                                          const CLI::Validator& item_check) {
  return command
      ->add_option_function<std::string>(
          name,
          [&target](const std::string& text) {
            target.clear();
            for (const std::string& item : comma_items(text))
              target.push_back(std::strtoll(item.c_str(), nullptr, 10));
          },
          help)
      ->check(list_of(item_check));
}

}  // namespace lengen::cli
