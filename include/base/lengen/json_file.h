#pragma once
// Every JSON file lengen reads: comments allowed, duplicate keys refused, every
// problem a UserError that starts with "FILE:LINE:COLUMN".
#include <nlohmann/json.hpp>
#include <string>

namespace lengen {

// `source` names the text in messages; `key_noun` says what a duplicate key is ("config key").
nlohmann::json parse_json_text(const std::string& text, const std::string& source,
                               const std::string& key_noun = "key");

// The whole file; a missing file, a directory or an unreadable one throws UserError naming it.
std::string read_text_file(const std::string& path, const std::string& what = "file");

nlohmann::json read_json_file(const std::string& path);
nlohmann::ordered_json read_ordered_json_file(const std::string& path);

}  // namespace lengen
