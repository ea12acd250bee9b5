#pragma once
// Errors a user can cause (bad config, missing file, malformed data). The CLI prints the
// message as one line and exits with kUserErrorExitCode; anything else is a bug.
#include <stdexcept>
#include <string>
#include <vector>

namespace lengen {

constexpr int kUserErrorExitCode = 2;

// `text` with its control characters shown as \xNN: a NUL (from a data file, a config key or
// an argument) would end a message early, a newline would break its one line.
std::string printable(const std::string& text);

// `text` as one word a shell reads back, quoted only where it must be: commands a user may paste.
std::string shell_word(const std::string& text);

class UserError : public std::runtime_error {
 public:
  explicit UserError(const std::string& message) : std::runtime_error(printable(message)) {}
};

// The closest candidate by edit distance, or "" when nothing is reasonably close.
std::string closest_match(const std::string& word, const std::vector<std::string>& candidates);

// One line for a name that is not among `known`: "unknown normalizer 'entmax_15' (did you mean
// 'entmax15'?); known: softmax, sparsemax, ...", `what` naming the kind of thing.
std::string unknown_name_message(const std::string& what, const std::string& name,
                                 const std::vector<std::string>& known);

}  // namespace lengen
