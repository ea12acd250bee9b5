#pragma once
// A user's notes in a JSON file lengen rewrites from what it parsed: the keys it does not write,
// at any depth, kept as read and put back where they were.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace lengen {

// What `read` holds that `own` (lengen's writing of what it parsed from `read`) lacks, as an
// object from JSON pointer ("/attention/note") to value: keys absent from `own`, and inside keys
// both hold as objects (or as arrays of one length), what is missing there.
nlohmann::json notes_beside(const nlohmann::json& read, const nlohmann::json& own);

// Puts each note of `notes` (notes_beside's form) into the object `json` where its place still
// is: its parent exists there as an object and lengen's own key of that name does not. A note
// whose parent is gone (a re-measured entry without attention statistics, say), or whose key
// lengen now writes itself (lengen's own keys win), is kept at the top level under its dotted
// name ("attention.seen"), or, where that key is taken, under the first free "NAME (2)",
// "NAME (3)", ... No note is dropped. Returns each moved note as "WHERE -> KEY".
std::vector<std::string> put_notes_back(nlohmann::json& json, const nlohmann::json& notes);

// A note's dotted name: "/attention/note" -> "attention.note".
std::string note_name(const std::string& pointer);

}  // namespace lengen
