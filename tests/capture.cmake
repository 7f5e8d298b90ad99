# The capture tests (tests/test_capture_*.c, and test_queries' and test_gs' captures;
# tests/CMakeLists.txt makes the targets) replay through kiln_replay_core
# (src/capture/replay.c).
# test_capture_replay and test_capture_files also run the example scenes
# (examples/sources.cmake); test_capture_files reads the checked-in
# captures (tests/captures/) and their images (tests/golden/capture/, with
# Debian's libstb) through KILN_SOURCE_DIR. scripts/bless-golden.sh
# rewrites both (docs/capture.md, docs/golden.md).
include(${PROJECT_SOURCE_DIR}/examples/sources.cmake)
include(${PROJECT_SOURCE_DIR}/examples/stb.cmake)

foreach(t test_capture_api test_capture_streams test_capture_decode test_capture_replay test_buffer_srv
          test_capture_files test_queries test_gs test_so test_sample_cmp test_mrt8 test_bc test_sampler_ext test_msaa
          test_texture_kinds test_vs_textures test_depth_only)
  if(TARGET ${t})
    target_link_libraries(${t} PRIVATE kiln_replay_core)
  endif()
endforeach()
foreach(t test_capture_replay test_capture_files test_capture_decode test_shadow)
  if(TARGET ${t})
    target_sources(${t} PRIVATE ${KILN_DEMO_SCENE_SOURCES})
    target_include_directories(${t} PRIVATE ${KILN_DEMO_DIR})
    target_compile_definitions(${t} PRIVATE KILN_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
      _POSIX_C_SOURCE=200809L)
    target_link_libraries(${t} PRIVATE m)
  endif()
endforeach()
if(TARGET test_capture_files)
  if(KILN_STB_TARGET)
    target_link_libraries(test_capture_files PRIVATE ${KILN_STB_TARGET})
  else()
    message(WARNING "stb (libstb-dev) not found: test_capture_files will skip")
    target_compile_definitions(test_capture_files PRIVATE KILN_CAPTURE_NO_STB)
  endif()
  set_tests_properties(test_capture_files PROPERTIES SKIP_RETURN_CODE 77)
endif()
