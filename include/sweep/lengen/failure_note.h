#pragma once
// NAME.failure.txt, the note a sweep leaves beside a run that failed: why (its first line, which
// the report quotes) and the end of the run's log. The note ends with a line that fingerprints
// what lengen wrote above it, so a note the user has annotated since is told apart from lengen's
// own: lengen replaces or removes only its own notes, and keeps an annotated one.
#include <string>

namespace lengen {

// Writes the note of a failure. An earlier note of lengen's is replaced; an annotated one (or a
// file of the user's) is kept, as it is, below the new note.
void write_failure_note(const std::string& path, const std::string& why, const std::string& detail);

// After the run succeeded: removes lengen's own note and returns true (also when there is none);
// keeps an annotated one as the user left it (without a note lengen stacked above it since) and
// returns false.
bool remove_failure_note(const std::string& path);

}  // namespace lengen
