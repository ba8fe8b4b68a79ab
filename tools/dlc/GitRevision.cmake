# Writes OUTPUT (a C++ fragment) with the source tree's git revision, only
# when it changed, so that `dlc --version` names the commit it was built from
# without rebuilding dlc on every build. Run as `cmake -DSOURCE=... -DOUTPUT=...
# -P GitRevision.cmake`.
set(revision "unknown")
execute_process(COMMAND git -C "${SOURCE}" rev-parse --short=12 HEAD
  OUTPUT_VARIABLE head RESULT_VARIABLE failed OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT failed AND head)
  set(revision "${head}")
  execute_process(COMMAND git -C "${SOURCE}" diff --quiet HEAD --
    RESULT_VARIABLE dirty ERROR_QUIET)
  if(dirty)
    string(APPEND revision "-dirty")
  endif()
endif()
set(text "#define DLC_GIT_REVISION \"${revision}\"\n")
if(EXISTS "${OUTPUT}")
  file(READ "${OUTPUT}" old)
endif()
if(NOT "${old}" STREQUAL "${text}")
  file(WRITE "${OUTPUT}" "${text}")
endif()
