# Writes OUT as `#define LENGEN_BUILD_ID "<commit>"` (git describe of SOURCE_DIR; "-dirty" when the
# tree has uncommitted changes; "unknown" outside a git checkout). Run at every build, it rewrites
# OUT only when the id changed, so an unchanged tree recompiles nothing.
execute_process(COMMAND git -C "${SOURCE_DIR}" describe --always --dirty --abbrev=7
                OUTPUT_VARIABLE id OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE failed)
if(failed OR id STREQUAL "")
  set(id "unknown")
endif()
set(text "#define LENGEN_BUILD_ID \"${id}\"\n")
if(EXISTS "${OUT}")
  file(READ "${OUT}" before)
endif()
if(NOT before STREQUAL text)
  file(WRITE "${OUT}" "${text}")
endif()
