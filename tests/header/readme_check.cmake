# cmake -DREADME=<README.md> -DEXAMPLE=<readme_example.c> -P readme_check.cmake
#
# Passes iff the first ```c block after the "## Embedding" heading of the
# README is, byte for byte, the example file that the build compiles and
# ctest runs (readme_example). Edit both together.
#
# Plain string(FIND)/SUBSTRING only: CMake lists would mangle the ';' and
# '[' ']' that C code is full of.
foreach(v README EXAMPLE)
  if(NOT DEFINED ${v} OR NOT EXISTS "${${v}}")
    message(FATAL_ERROR "readme_check: ${v} is not set or does not exist: '${${v}}'")
  endif()
endforeach()

file(READ "${README}" text)
string(REPLACE "\r\n" "\n" text "\n${text}")

# The section: from the heading to the next level-2 heading.
string(REGEX MATCH "\n## Embedding[ \t]*\n" heading "${text}")
if(NOT heading)
  message(FATAL_ERROR "readme_check: no '## Embedding' heading in ${README}")
endif()
string(FIND "${text}" "${heading}" at)
string(LENGTH "${heading}" len)
math(EXPR at "${at} + ${len} - 1") # keep the newline so "\n## " finds a heading on line 1
string(SUBSTRING "${text}" ${at} -1 section)
string(FIND "${section}" "\n## " next)
if(next GREATER_EQUAL 0)
  string(SUBSTRING "${section}" 0 ${next} section)
endif()

# The first ```c block in the section. The block is its lines, each ending
# with a newline, as a file holds them.
string(FIND "${section}" "\n```c\n" open)
if(open LESS 0)
  message(FATAL_ERROR "readme_check: no ```c block under '## Embedding' in ${README}")
endif()
math(EXPR open "${open} + 6")
string(SUBSTRING "${section}" ${open} -1 rest)
string(FIND "${rest}" "\n```" close)
if(close LESS 0)
  message(FATAL_ERROR "readme_check: the ```c block under '## Embedding' is not closed")
endif()
math(EXPR close "${close} + 1")
string(SUBSTRING "${rest}" 0 ${close} block)

file(READ "${EXAMPLE}" example)
string(REPLACE "\r\n" "\n" example "${example}")
if(block STREQUAL example)
  message(STATUS "readme_check: the README's Embedding example matches ${EXAMPLE}")
  return()
endif()

# Name the first line that differs, to make the fix obvious.
set(lineno 1)
while(1)
  string(FIND "${block}" "\n" ia)
  string(FIND "${example}" "\n" ib)
  if(ia LESS 0)
    set(la "${block}")
  else()
    string(SUBSTRING "${block}" 0 ${ia} la)
  endif()
  if(ib LESS 0)
    set(lb "${example}")
  else()
    string(SUBSTRING "${example}" 0 ${ib} lb)
  endif()
  if(NOT la STREQUAL lb OR ia LESS 0 OR ib LESS 0)
    break()
  endif()
  math(EXPR ia "${ia} + 1")
  math(EXPR ib "${ib} + 1")
  string(SUBSTRING "${block}" ${ia} -1 block)
  string(SUBSTRING "${example}" ${ib} -1 example)
  math(EXPR lineno "${lineno} + 1")
endwhile()
if(la STREQUAL lb) # same text, but only one of them ends with a newline
  if(ia LESS 0)
    string(APPEND la " <no newline>")
  endif()
  if(ib LESS 0)
    string(APPEND lb " <no newline>")
  endif()
endif()
message(FATAL_ERROR "readme_check: the README's Embedding example and ${EXAMPLE} differ "
                    "at line ${lineno} of the block:\n"
                    "  README:  '${la}'\n  example: '${lb}'\n"
                    "Keep them identical: the example file is what ctest compiles and runs.")
