# cmake -DSOURCE_DIR=... -DOUTPUT=... -DPROJECT_VERSION=... -P build_info.cmake:
# writes OUTPUT, the version of SOURCE_DIR as `git describe` says it, its
# git commit, tree state and date, for `fluxopctl version`.
# Run at every build; OUTPUT is rewritten only when its content changes, so
# that a build of an unchanged commit recompiles and relinks nothing. The
# build date is the commit's (or SOURCE_DATE_EPOCH's), not the clock's: the
# same commit builds the same binary. Outside git, all are "unknown" and the
# version is PROJECT_VERSION.
#
# The version: on a tag vX.Y.Z, X.Y.Z; N commits after it, X.Y.Z-N-gHASH;
# before the first tag, PROJECT_VERSION-N-gHASH with N counted from the
# first commit; "-dirty" after it when tracked files differ from the commit.
set(version ${PROJECT_VERSION})
set(commit unknown)
set(tree_state unknown)
set(date unknown)
execute_process(COMMAND git -C ${SOURCE_DIR} rev-parse HEAD
                OUTPUT_VARIABLE head RESULT_VARIABLE status OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(status EQUAL 0 AND head MATCHES "^[0-9a-f]+$")
  set(commit ${head})
  execute_process(COMMAND git -C ${SOURCE_DIR} status --porcelain --untracked-files=no
                  OUTPUT_VARIABLE changes RESULT_VARIABLE status ERROR_QUIET)
  if(status EQUAL 0)
    if(changes STREQUAL "")
      set(tree_state clean)
    else()
      set(tree_state dirty)
    endif()
  endif()
  execute_process(COMMAND git -C ${SOURCE_DIR} describe --tags --match "v[0-9]*" --abbrev=7
                  OUTPUT_VARIABLE described RESULT_VARIABLE status OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(status EQUAL 0 AND described MATCHES "^v([0-9].*)$")
    set(version ${CMAKE_MATCH_1})
  else()
    execute_process(COMMAND git -C ${SOURCE_DIR} rev-list --count HEAD
                    OUTPUT_VARIABLE count OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    string(SUBSTRING ${commit} 0 7 short)
    set(version ${PROJECT_VERSION}-${count}-g${short})
  endif()
  if(tree_state STREQUAL "dirty")
    string(APPEND version -dirty)
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} -E env TZ=UTC
                          git -C ${SOURCE_DIR} log -1 --date=format-local:%Y-%m-%dT%H:%M:%SZ --format=%cd
                  OUTPUT_VARIABLE commit_date RESULT_VARIABLE status OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(status EQUAL 0 AND NOT commit_date STREQUAL "")
    set(date ${commit_date})
  endif()
endif()
if(DEFINED ENV{SOURCE_DATE_EPOCH})
  string(TIMESTAMP date "%Y-%m-%dT%H:%M:%SZ" UTC)
endif()
set(content "#define FLUXOPCTL_GIT_VERSION \"${version}\"
#define FLUXOPCTL_GIT_COMMIT \"${commit}\"
#define FLUXOPCTL_GIT_TREE_STATE \"${tree_state}\"
#define FLUXOPCTL_BUILD_DATE \"${date}\"
")
set(previous "")
if(EXISTS ${OUTPUT})
  file(READ ${OUTPUT} previous)
endif()
if(NOT previous STREQUAL content)
  file(WRITE ${OUTPUT} "${content}")
endif()
