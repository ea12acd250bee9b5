#pragma once
// Data files as the reference generator writes them: parallel NAME.src / NAME.trg files, one
// sample per line, symbols as integers separated by single spaces. Evaluation splits are
// named test_{i}_{L} (i: index, L: source length).
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

// Reads NAME.src / NAME.trg. Empty lines, anything but integers separated by single spaces,
// symbols outside [0, num_symbols) and files of different line counts throw UserError
// "FILE:LINE: what is wrong". Samples of a task that labels every source symbol
// (Framing::kLabelPerPosition) must have as many labels as symbols. With `content_hash`, the
// hash of the bytes read (NAME.src then NAME.trg, as ContentHash::add_file of each gives it): what
// a run records of files is what it read, even when they are rewritten meanwhile.
std::vector<Sample> read_samples(const std::string& stem, int64_t num_symbols,
                                 Framing framing = Framing::kTargetAfterSource,
                                 std::string* content_hash = nullptr);

// The hash of a split's files (STEM.src then STEM.trg, by content), as read_samples' content_hash
// gives it: what results.json and data.json record of a split.
std::string split_files_hash(const std::string& stem);

struct EvalSplit {
  int64_t length;
  std::string stem;  // DIR/test_{i}_{L}, without extension
};

std::string eval_split_stem(const std::string& dir, int64_t index, int64_t length);

// The test_{i}_{L} splits in `dir`, sorted by L (then i). A .src without its .trg, a .trg
// without its .src, or a missing directory, throws UserError.
std::vector<EvalSplit> list_eval_splits(const std::string& dir);

}  // namespace lengen
