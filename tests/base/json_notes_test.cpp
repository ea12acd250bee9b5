// A user's notes in a JSON file lengen rewrites: found at any depth, put back where they were,
// moved to the top under a free dotted name where their place is gone, never dropped.
#include "lengen/json_notes.h"

#include <gtest/gtest.h>

namespace lengen {
namespace {

using Json = nlohmann::json;

TEST(JsonNotes, NotesAreFoundAtAnyDepthAndPutBackTheSame) {
  const Json own = {{"a", 1}, {"b", {{"c", 2}}}, {"list", Json::array({Json{{"x", 1}}, Json{{"x", 2}}})}};
  Json read = own;
  read["mine"] = "top";
  read["b"]["why"] = Json::array({1, 2});
  read["list"][1]["seen"] = "odd";
  read["b"]["a/b~c"] = true;  // pointer escapes
  const Json notes = notes_beside(read, own);
  EXPECT_EQ(notes.size(), 4u) << notes.dump();
  Json written = own;
  EXPECT_TRUE(put_notes_back(written, notes).empty());
  EXPECT_EQ(written, read);
  EXPECT_EQ(note_name("/b/a~1b~0c"), "b.a/b~c");
}

TEST(JsonNotes, ANoteWhosePlaceIsGoneMovesToTheTopUnderAFreeName) {
  const Json notes = {{"/attention/seen", "x"}, {"/length", "mine"}, {"/model/where", "y"}};
  Json written = {{"length", 4}, {"model", {{"where", "lengen's"}}}, {"attention.seen", "an earlier note"}};
  const std::vector<std::string> moved = put_notes_back(written, notes);
  EXPECT_EQ(written["attention.seen"], "an earlier note");
  EXPECT_EQ(written["attention.seen (2)"], "x");
  EXPECT_EQ(written["model"]["where"], "lengen's");  // lengen's own key wins ...
  EXPECT_EQ(written["model.where"], "y");            // ... and the note moves beside it
  EXPECT_EQ(written["length (2)"], "mine");
  EXPECT_EQ(moved, (std::vector<std::string>{"attention.seen -> \"attention.seen (2)\"",
                                             "length -> \"length (2)\"", "model.where -> \"model.where\""}));
}

TEST(JsonNotes, ArraysOfAnotherLengthAreNotComparedItemByItem) {
  const Json own = {{"list", {1, 2}}};
  const Json read = {{"list", {1, 2, 3}}};
  EXPECT_TRUE(notes_beside(read, own).empty());
}

}  // namespace
}  // namespace lengen
