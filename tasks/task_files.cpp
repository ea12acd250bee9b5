#include "lengen/task_files.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <regex>
#include <string_view>
#include <tuple>

#include "lengen/content_hash.h"
#include "lengen/errors.h"

namespace lengen {

namespace fs = std::filesystem;

namespace {

// Large enough that writes are few, small enough to stay in cache.
constexpr size_t kFlushBytes = size_t{1} << 20;
// Longest bad token quoted in an error message.
constexpr size_t kMaxQuoted = 24;

std::string system_error(const std::string& what, const std::string& path) {
  return "cannot " + what + " " + path + ": " + std::strerror(errno);
}

std::string read_file(const std::string& path) {
  // A FIFO would block until a writer came, a device might never end.
  std::error_code error;
  if (fs::exists(path, error) && !fs::is_regular_file(path, error)) {
    throw UserError(path + ": not a regular file (a FIFO, device, socket or folder), not a data file");
  }
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (!file) throw UserError(system_error("read", path));
  std::string text;
  char chunk[1 << 16];
  size_t got;
  while ((got = std::fread(chunk, 1, sizeof chunk, file)) > 0) text.append(chunk, got);
  bool failed = std::ferror(file);
  std::fclose(file);
  if (failed) throw UserError(system_error("read", path));
  return text;
}

// Splits text into lines; a final newline does not start another line, and a '\r' before a
// newline is dropped so files written on Windows read too.
std::vector<std::string_view> split_lines(const std::string& text) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string_view line(text.data() + start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    start = end + 1;
  }
  return lines;
}

// A token from a file as a message can show it: bytes outside ASCII (a byte-order mark would be
// invisible) as \xNN, long tokens cut; UserError escapes the control bytes.
std::string quoted(std::string_view token) {
  std::string text = "'";
  for (unsigned char byte : token.substr(0, kMaxQuoted)) {
    char escaped[8];
    std::snprintf(escaped, sizeof escaped, "\\x%02x", byte);
    text += byte < 0x7f ? std::string(1, static_cast<char>(byte)) : std::string(escaped);
  }
  return text + (token.size() > kMaxQuoted ? "...'" : "'");
}

Symbols parse_line(std::string_view line, int64_t num_symbols, const std::string& path, size_t number) {
  auto fail = [&](const std::string& what) {
    throw UserError(path + ":" + std::to_string(number) + ": " + what);
  };
  if (line.empty()) fail("empty line (every sample needs at least one symbol)");
  Symbols symbols;
  size_t start = 0;
  while (true) {
    size_t end = std::min(line.find(' ', start), line.size());
    std::string_view token = line.substr(start, end - start);
    if (token.empty()) fail("expected integers separated by single spaces");
    int64_t value = 0;
    auto [next, error] = std::from_chars(token.data(), token.data() + token.size(), value);
    if (error != std::errc() || next != token.data() + token.size()) {
      fail(quoted(token) + " is not an integer");
    }
    if (value < 0 || value >= num_symbols) {
      fail("symbol " + std::string(token) + " is out of range [0, " + std::to_string(num_symbols) + ")");
    }
    symbols.push_back(static_cast<int32_t>(value));
    if (end == line.size()) return symbols;
    start = end + 1;
  }
}

}  // namespace

SampleWriter::SampleWriter(std::string stem) : stem_(std::move(stem)) {
  for (Output* output : {&src_, &trg_}) {
    output->path = stem_ + (output == &src_ ? ".src.part" : ".trg.part");
    output->file = std::fopen(output->path.c_str(), "wb");
    if (!output->file) {
      std::string message = system_error("write", output->path);
      discard();
      throw UserError(message);
    }
    output->buffer.reserve(kFlushBytes + 4096);
  }
}

SampleWriter::~SampleWriter() {
  if (!committed_) discard();
}

void SampleWriter::discard() {
  for (Output* output : {&src_, &trg_}) {
    if (output->file) std::fclose(output->file);
    output->file = nullptr;
    if (!output->path.empty()) std::remove(output->path.c_str());
  }
}

void SampleWriter::write(const Sample& sample) {
  append(src_, sample.src);
  append(trg_, sample.trg);
}

void SampleWriter::append(Output& output, const Symbols& symbols) {
  char digits[16];
  for (size_t i = 0; i < symbols.size(); ++i) {
    if (i) output.buffer.push_back(' ');
    auto end = std::to_chars(digits, digits + sizeof digits, symbols[i]).ptr;
    output.buffer.append(digits, end);
  }
  output.buffer.push_back('\n');
  if (output.buffer.size() >= kFlushBytes) flush(output);
}

void SampleWriter::flush(Output& output) {
  if (std::fwrite(output.buffer.data(), 1, output.buffer.size(), output.file) != output.buffer.size()) {
    throw UserError(system_error("write", output.path));
  }
  output.buffer.clear();
}

void SampleWriter::commit() {
  for (Output* output : {&src_, &trg_}) {
    flush(*output);
    int failed = std::fclose(output->file);
    output->file = nullptr;
    if (failed) throw UserError(system_error("write", output->path));
  }
  for (Output* output : {&src_, &trg_}) {
    std::string final_path = output->path.substr(0, output->path.size() - std::strlen(".part"));
    std::error_code error;
    fs::rename(output->path, final_path, error);
    if (error)
      throw UserError("cannot rename " + output->path + " to " + final_path + ": " + error.message());
  }
  committed_ = true;
}

void write_samples(const std::string& stem, const std::vector<Sample>& samples) {
  SampleWriter writer(stem);
  for (const auto& sample : samples) writer.write(sample);
  writer.commit();
}

std::string split_files_hash(const std::string& stem) {
  ContentHash hash;
  hash.add_file(stem + ".src");
  hash.add_file(stem + ".trg");
  return hash.hex();
}

std::vector<Sample> read_samples(const std::string& stem, int64_t num_symbols, Framing framing,
                                 std::string* content_hash) {
  const std::string src_path = stem + ".src";
  const std::string trg_path = stem + ".trg";
  const std::string src_text = read_file(src_path);
  const std::string trg_text = read_file(trg_path);
  if (content_hash != nullptr) {
    ContentHash hash;
    hash.add(src_text.data(), src_text.size());
    hash.add(trg_text.data(), trg_text.size());
    *content_hash = hash.hex();
  }
  std::vector<std::string_view> src_lines = split_lines(src_text);
  std::vector<std::string_view> trg_lines = split_lines(trg_text);
  if (src_lines.size() != trg_lines.size()) {
    bool src_shorter = src_lines.size() < trg_lines.size();
    const std::string& shorter = src_shorter ? src_path : trg_path;
    const std::string& longer = src_shorter ? trg_path : src_path;
    size_t lines = std::min(src_lines.size(), trg_lines.size());
    // A blank last line (a stray '\r' or an extra newline) is the longer file's fault.
    const std::vector<std::string_view>& longer_lines = src_shorter ? trg_lines : src_lines;
    if (longer_lines.size() == lines + 1 && longer_lines.back().empty()) {
      throw UserError(longer + ":" + std::to_string(lines + 1) +
                      ": an empty last line (a stray carriage return or blank line after the samples); " +
                      shorter + " has " + std::to_string(lines) + " lines");
    }
    throw UserError(shorter + ":" + std::to_string(lines + 1) + ": file ends after " + std::to_string(lines) +
                    " lines but " + longer + " has " +
                    std::to_string(std::max(src_lines.size(), trg_lines.size())));
  }
  std::vector<Sample> samples(src_lines.size());
  for (size_t i = 0; i < samples.size(); ++i) {
    samples[i].src = parse_line(src_lines[i], num_symbols, src_path, i + 1);
    samples[i].trg = parse_line(trg_lines[i], num_symbols, trg_path, i + 1);
    samples[i].framing = framing;
    if (framing == Framing::kLabelPerPosition && samples[i].trg.size() != samples[i].src.size()) {
      throw UserError(trg_path + ":" + std::to_string(i + 1) + ": " + std::to_string(samples[i].trg.size()) +
                      " labels for the " + std::to_string(samples[i].src.size()) + " symbols of " + src_path +
                      ":" + std::to_string(i + 1) + " (this task labels every source symbol)");
    }
  }
  return samples;
}

std::string eval_split_stem(const std::string& dir, int64_t index, int64_t length) {
  return (fs::path(dir) / ("test_" + std::to_string(index) + "_" + std::to_string(length))).string();
}

std::vector<EvalSplit> list_eval_splits(const std::string& dir) {
  std::error_code error;
  if (!fs::is_directory(dir, error)) {
    throw UserError(fs::exists(dir, error) ? dir + " is a file, not a data folder"
                                           : dir + ": no such folder");
  }
  static const std::regex kSplitName(R"(test_(\d+)_(\d+))");
  std::vector<std::tuple<int64_t, int64_t, std::string>> found;  // (L, i, stem)
  for (const auto& entry : fs::directory_iterator(dir)) {
    const fs::path& path = entry.path();
    const std::string name = path.stem().string(), extension = path.extension().string();
    if (name.rfind("test_", 0) != 0 || (extension != ".src" && extension != ".trg")) continue;
    // A split is read through its .src; either file alone is a split the user meant, not one to skip.
    const std::string stem = (path.parent_path() / name).string();
    const std::string other = stem + (extension == ".src" ? ".trg" : ".src");
    if (!fs::exists(other)) throw UserError(other + ": missing (" + path.string() + " exists)");
    if (extension == ".trg") continue;
    std::smatch match;
    int64_t index = -1, length = 0;
    const auto parse = [&](int group, int64_t& value) {
      const char* begin = name.data() + match.position(group);
      return std::from_chars(begin, begin + match.length(group), value).ec == std::errc();
    };
    if (!std::regex_match(name, match, kSplitName) || !parse(1, index) || !parse(2, length) || length < 1) {
      throw UserError(path.string() +
                      ": a test file is named test_{i}_{L}.src, i and L whole numbers (L at least 1)");
    }
    found.emplace_back(length, index, stem);
  }
  std::sort(found.begin(), found.end());
  std::vector<EvalSplit> splits;
  for (auto& [length, index, stem] : found) splits.push_back({length, std::move(stem)});
  return splits;
}

}  // namespace lengen
