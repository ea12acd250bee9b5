#pragma once
// The reference generator's data files: NAME.src / NAME.trg, one sample a line, integers
// separated by single spaces; evaluation splits are test_{i}_{L} (L: source length).
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "lengen/task.h"

namespace lengen {

// Writes samples one at a time into NAME.src.part / NAME.trg.part, buffered; commit() renames
// them to NAME.src / NAME.trg, so an interrupted write never leaves half a data set behind.
class SampleWriter {
 public:
  explicit SampleWriter(std::string stem);
  ~SampleWriter();  // Removes the .part files unless commit() succeeded.
  SampleWriter(const SampleWriter&) = delete;
  SampleWriter& operator=(const SampleWriter&) = delete;

  void write(const Sample& sample);
  void commit();

 private:
  struct Output {
    std::string path;
    std::FILE* file = nullptr;
    std::string buffer;
  };
  void flush(Output& output);
  void discard();
  void append(Output& output, const Symbols& symbols);

  std::string stem_;
  Output src_;
  Output trg_;
  bool committed_ = false;
};

void write_samples(const std::string& stem, const std::vector<Sample>& samples);

// Reads NAME.src / NAME.trg; malformed lines throw UserError "FILE:LINE: what is wrong". With
// `content_hash`, the hash of the bytes read, so a run records what it actually read.
std::vector<Sample> read_samples(const std::string& stem, int64_t num_symbols,
                                 Framing framing = Framing::kTargetAfterSource,
                                 std::string* content_hash = nullptr);

// The hash of a split's files, as read_samples' content_hash gives it.
std::string split_files_hash(const std::string& stem);

struct EvalSplit {
  int64_t length;
  std::string stem;  // DIR/test_{i}_{L}, without extension
};

std::string eval_split_stem(const std::string& dir, int64_t index, int64_t length);

// The test_{i}_{L} splits in `dir`, sorted by L (then i); UserError for an unpaired file.
std::vector<EvalSplit> list_eval_splits(const std::string& dir);

}  // namespace lengen
