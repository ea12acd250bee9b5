#pragma once
// NAME.failure.txt, the note a sweep leaves beside a run that failed: why (its first line, which
// the report quotes) and the end of the run's log. Written when the run fails, replaced when it
// fails again, removed when it succeeds.
#include <string>

namespace lengen {

void write_failure_note(const std::string& path, const std::string& why, const std::string& detail);

// After the run succeeded; nothing when there is no note.
void remove_failure_note(const std::string& path);

}  // namespace lengen
