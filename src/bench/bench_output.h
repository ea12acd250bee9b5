#pragma once
// What the benchmarks share: their clock and their output, a table or a JSON list.
#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "lengen/named_entries.h"

namespace lengen {

// Thread CPU time when single-threaded (robust on a shared machine, where wall time mostly
// measures the neighbours and process time counts idle pool threads spinning), else wall time.
inline double bench_now_seconds(bool single_threaded) {
  if (single_threaded) {
    timespec now{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    return static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec);
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// The baseline (the first of `all`), then the entries named in `only` (all when it is empty), in
// the order of `all`; UserError from `option` for a name not in `all`.
template <class Entry>
std::vector<Entry> baseline_and_only(const std::vector<Entry>& all, const std::vector<std::string>& only,
                                     const std::string& option, const char* kind) {
  for (const std::string& name : only) {
    if (find_entry(all, name) == nullptr)
      throw UserError(option + ": " + unknown_name_message(kind, name, entry_names(all)));
  }
  std::vector<Entry> chosen = {all.front()};
  for (size_t i = 1; i < all.size(); ++i) {
    if (only.empty() || std::find(only.begin(), only.end(), all[i].name) != only.end())
      chosen.push_back(all[i]);
  }
  return chosen;
}

// A table column: its heading, its width (negative: left-aligned), the record's key it shows and
// the digits after a number's point; a null value shows as "-".
struct BenchColumn {
  const char* heading;
  int width;
  const char* key;
  int digits = 0;
};

// A benchmark's records: a table row each as it comes (under `title` and the headings), or with
// `json` one JSON list at the end (finish).
class BenchTable {
 public:
  BenchTable(bool json, const std::string& title, std::vector<BenchColumn> columns)
      : json_(json), columns_(std::move(columns)) {
    if (json_) return;
    std::string row;
    for (const BenchColumn& column : columns_) row += cell(column, column.heading);
    std::cout << title << "\n" << row.substr(1) << std::endl;
  }
  // With `json`, prints the list.
  void finish() const {
    if (json_) std::cout << records_.dump(2) << std::endl;
  }

  void add(const nlohmann::json& record, const std::string& tail = "") {
    if (json_) {
      records_.push_back(record);
      return;
    }
    std::string row;
    for (const BenchColumn& column : columns_) {
      const nlohmann::json value = record.value(column.key, nlohmann::json());
      row += cell(column, value.is_string() ? value.get<std::string>()
                          : value.is_null() ? "-"
                                            : fmt::format("{:.{}f}", value.get<double>(), column.digits));
    }
    std::cout << row.substr(1) << tail << std::endl;
  }

 private:
  static std::string cell(const BenchColumn& column, const std::string& text) {
    return column.width < 0 ? fmt::format(" {:<{}}", text, -column.width)
                            : fmt::format(" {:>{}}", text, column.width);
  }

  bool json_;
  std::vector<BenchColumn> columns_;
  nlohmann::json records_ = nlohmann::json::array();
};

}  // namespace lengen
