#include "lengen/json_file.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <vector>

#include "lengen/errors.h"

namespace lengen {

namespace {

// "line:column" (both from 1, as editors count) of nlohmann's 1-based byte of the error.
std::string text_position(const std::string& text, size_t byte) {
  size_t index = std::min(byte == 0 ? 0 : byte - 1, text.size());
  size_t line = 1 + std::count(text.begin(), text.begin() + index, '\n');
  size_t line_start = index == 0 ? std::string::npos : text.rfind('\n', index - 1);
  size_t column = line_start == std::string::npos ? index + 1 : index - line_start;
  return std::to_string(line) + ":" + std::to_string(column);
}

// nlohmann's message without its "[json.exception...] parse error at line 1, column 2: " head.
std::string parse_error_reason(const nlohmann::json::parse_error& error) {
  std::string message = error.what();
  size_t head = message.find("parse error");
  size_t colon = head == std::string::npos ? std::string::npos : message.find(": ", head);
  return colon == std::string::npos ? message : message.substr(colon + 2);
}

// Watches the parse: JSON keeps the last of two equal keys without a word, which hides a mistake.
template <typename Json>
class ParseChecks {
 public:
  ParseChecks(std::string source, std::string key_noun)
      : source_(std::move(source)), key_noun_(std::move(key_noun)) {}

  bool operator()(int /*depth*/, typename Json::parse_event_t event, Json& parsed) {
    using Event = typename Json::parse_event_t;
    if (event == Event::object_start) objects_.push_back({});
    if (event == Event::object_end) objects_.pop_back();
    if (event == Event::key && !objects_.empty()) {
      Object& object = objects_.back();
      object.current = parsed.template get<std::string>();
      if (!object.keys.insert(object.current).second) {
        throw UserError(source_ + ": duplicate " + key_noun_ + " '" + current_path() + "'");
      }
    }
    return true;
  }

 private:
  struct Object {
    std::set<std::string> keys;
    std::string current;
  };

  std::string current_path() const {
    std::string path;
    for (const auto& object : objects_) path += (path.empty() ? "" : ".") + object.current;
    return path;
  }

  std::string source_;
  std::string key_noun_;
  std::vector<Object> objects_;
};

template <typename Json>
Json parse_checked(const std::string& text, const std::string& source, const std::string& key_noun) {
  try {
    return Json::parse(text, ParseChecks<Json>(source, key_noun), /*allow_exceptions=*/true,
                       /*ignore_comments=*/true);
  } catch (const nlohmann::json::parse_error& error) {
    throw UserError(source + ":" + text_position(text, error.byte) +
                    ": invalid JSON: " + parse_error_reason(error));
  } catch (const nlohmann::json::out_of_range& error) {
    // A number beyond double's range (1e400): nlohmann names the number but not its place.
    const std::string message = error.what();
    const size_t reason = message.find("] ");
    throw UserError(source + ": " + (reason == std::string::npos ? message : message.substr(reason + 2)) +
                    " (a number beyond the range of a double)");
  }
}

}  // namespace

nlohmann::json parse_json_text(const std::string& text, const std::string& source,
                               const std::string& key_noun) {
  return parse_checked<nlohmann::json>(text, source, key_noun);
}

std::string read_text_file(const std::string& path, const std::string& what) {
  std::error_code error;
  if (!std::filesystem::exists(path, error)) throw UserError(path + ": no such " + what);
  // A FIFO would block until some writer came and a device (/dev/zero) never ends: only a regular
  // file (or a link to one) is read.
  if (!std::filesystem::is_regular_file(path, error))
    throw UserError(path + ": not a regular file (a directory, FIFO or device), not a " + what);
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  if (!in) throw UserError(path + ": cannot read the " + what);
  return text.str();
}

nlohmann::json read_json_file(const std::string& path) {
  return parse_json_text(read_text_file(path, "JSON file"), path);
}

nlohmann::ordered_json read_ordered_json_file(const std::string& path) {
  return parse_checked<nlohmann::ordered_json>(read_text_file(path, "JSON file"), path, "key");
}

}  // namespace lengen
