# The public header, checked as a user sees it.
#
#   header_c11, header_c17         kiln.h alone compiles as strict ISO C
#   header_cxx11, header_cxx17     ... and as strict ISO C++
#   readme_in_sync                 README.md's Embedding example is header/readme_example.c
#   readme_example                 that example compiles with the same strict flags
#                                  against include/ only, links the shared library
#                                  (so it uses only exported symbols) and works
#
# The header checks run the compiler as the test itself, with only include/
# on the include path, so a header that stops compiling as C++ fails one
# test instead of breaking the whole build.

set(KILN_HEADER_DIR ${CMAKE_CURRENT_SOURCE_DIR}/header)
set(KILN_HEADER_OUT ${CMAKE_CURRENT_BINARY_DIR}/header)
set(KILN_HEADER_FLAGS -Wall -Wextra -pedantic -Werror)
file(MAKE_DIRECTORY ${KILN_HEADER_OUT})

if(CMAKE_C_COMPILER_ID MATCHES "GNU|Clang")
  foreach(std c11 c17)
    add_test(NAME header_${std}
      COMMAND ${CMAKE_C_COMPILER} -std=${std} ${KILN_HEADER_FLAGS}
              -I${PROJECT_SOURCE_DIR}/include
              -c ${KILN_HEADER_DIR}/header_c.c -o ${KILN_HEADER_OUT}/header_${std}.o)
    set_tests_properties(header_${std} PROPERTIES TIMEOUT 60)
  endforeach()
else()
  message(STATUS "kiln: header_c* tests need a GNU-style C compiler; skipped")
endif()

if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
  foreach(std 11 17)
    add_test(NAME header_cxx${std}
      COMMAND ${CMAKE_CXX_COMPILER} -std=c++${std} ${KILN_HEADER_FLAGS}
              -I${PROJECT_SOURCE_DIR}/include
              -c ${KILN_HEADER_DIR}/header_cxx.cpp -o ${KILN_HEADER_OUT}/header_cxx${std}.o)
    set_tests_properties(header_cxx${std} PROPERTIES TIMEOUT 60)
  endforeach()
else()
  message(STATUS "kiln: header_cxx* tests need a GNU-style C++ compiler; skipped")
endif()

add_test(NAME readme_in_sync
  COMMAND ${CMAKE_COMMAND} -DREADME=${PROJECT_SOURCE_DIR}/README.md
          -DEXAMPLE=${KILN_HEADER_DIR}/readme_example.c
          -P ${KILN_HEADER_DIR}/readme_check.cmake)

# Built with the rest (it links the library the way a user does); a
# README example that no longer compiles is a build break, like a test.
add_executable(readme_example ${KILN_HEADER_DIR}/readme_example.c)
set_target_properties(readme_example PROPERTIES C_STANDARD 11 C_STANDARD_REQUIRED ON
  C_EXTENSIONS OFF)
if(CMAKE_C_COMPILER_ID MATCHES "GNU|Clang")
  target_compile_options(readme_example PRIVATE ${KILN_HEADER_FLAGS})
endif()
target_link_libraries(readme_example PRIVATE kiln::kiln)
add_test(NAME readme_example COMMAND readme_example)
set_tests_properties(readme_example PROPERTIES TIMEOUT 60)
