#pragma once
// The message of the UserError an action throws, or "" when it throws none.
#include <functional>
#include <string>

#include "lengen/errors.h"

namespace lengen::testing {

inline std::string user_error_message(const std::function<void()>& action) {
  try {
    action();
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

}  // namespace lengen::testing
