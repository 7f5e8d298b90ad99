# test_golden (tests/test_golden.c; tests/CMakeLists.txt makes the target
# and the ctest): the draw scenes of examples/, rendered with the soft
# backend and compared bit for bit with tests/golden/NAME.png. It compiles
# the demo core and scenes (examples/sources.cmake) into the test, reads and
# writes PNGs with Debian's libstb (examples/stb.cmake) and finds
# tests/golden through KILN_SOURCE_DIR. Mismatches are written to
# golden-out/ in the test's working directory (this build directory).
# Re-blessing: scripts/bless-golden.sh (docs/golden.md).
include(${PROJECT_SOURCE_DIR}/examples/sources.cmake)
include(${PROJECT_SOURCE_DIR}/examples/stb.cmake)

if(TARGET test_golden)
  target_sources(test_golden PRIVATE ${KILN_DEMO_SCENE_SOURCES})
  target_include_directories(test_golden PRIVATE ${KILN_DEMO_DIR})
  # getcwd and mkdir are POSIX, not C11.
  target_compile_definitions(test_golden PRIVATE KILN_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    _POSIX_C_SOURCE=200809L)
  if(KILN_STB_TARGET)
    target_link_libraries(test_golden PRIVATE ${KILN_STB_TARGET} m)
  else()
    # Without stb the test cannot read PNGs: it builds, says why and skips.
    message(WARNING "stb (libstb-dev) not found: test_golden will skip")
    target_compile_definitions(test_golden PRIVATE KILN_GOLDEN_NO_STB)
    target_link_libraries(test_golden PRIVATE m)
  endif()
  set_tests_properties(test_golden PROPERTIES SKIP_RETURN_CODE 77
    WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
endif()

# test_srgb_scene: the "srgb" scene's pixels against the sRGB curve (no
# PNGs: the demo core and scenes only).
if(TARGET test_srgb_scene)
  target_sources(test_srgb_scene PRIVATE ${KILN_DEMO_SCENE_SOURCES})
  target_include_directories(test_srgb_scene PRIVATE ${KILN_DEMO_DIR})
  target_link_libraries(test_srgb_scene PRIVATE m)
endif()
