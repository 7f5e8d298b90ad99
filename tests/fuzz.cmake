# The capture fuzzer (docs/capture.md, "Fuzzing"): tests/fuzz/fuzz_capture.c
# reads arbitrary bytes as capture records with the replay's decoder in its
# tolerant mode and drives a device with them.
#
# Every build: fuzz_capture_replay (the entry point and a plain driver, any
# compiler) runs the seed corpus (the example scenes' captures,
# tests/captures, and tests/fuzz/seeds) and every kept crash (tests/fuzz/regressions) as ctest
# fuzz_corpus. With KILN_FUZZ=ON (the fuzz preset: clang, ASan + UBSan),
# fuzz_capture is the libFuzzer target scripts/fuzz.sh runs.
add_executable(fuzz_capture_replay ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/fuzz_capture.c
  ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/driver.c)
target_include_directories(fuzz_capture_replay PRIVATE ${PROJECT_SOURCE_DIR}/src)
target_compile_options(fuzz_capture_replay PRIVATE ${KILN_WARNINGS})
target_link_libraries(fuzz_capture_replay PRIVATE kiln_static)
add_test(NAME fuzz_corpus COMMAND fuzz_capture_replay ${CMAKE_CURRENT_SOURCE_DIR}/captures
  ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/seeds ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/regressions)
set_tests_properties(fuzz_corpus PROPERTIES TIMEOUT 600 ENVIRONMENT
  "LSAN_OPTIONS=suppressions=${CMAKE_CURRENT_SOURCE_DIR}/lsan.supp;TSAN_OPTIONS=suppressions=${CMAKE_CURRENT_SOURCE_DIR}/tsan.supp")

if(KILN_FUZZ)
  add_executable(fuzz_capture ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/fuzz_capture.c)
  target_include_directories(fuzz_capture PRIVATE ${PROJECT_SOURCE_DIR}/src)
  target_compile_options(fuzz_capture PRIVATE ${KILN_WARNINGS} -fsanitize=fuzzer)
  target_link_options(fuzz_capture PRIVATE -fsanitize=fuzzer)
  target_link_libraries(fuzz_capture PRIVATE kiln_static)
endif()
