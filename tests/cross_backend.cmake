# The osmesa backend's tests (docs/backends.md):
# - test_cross_backend (tests/test_cross_backend.c) renders every example
#   scene and a few hundred random scenes on soft and on osmesa and compares
#   them; it compiles the demo's scenes in, like test_golden.
# - The backend-neutral API tests run a second time on osmesa, as
#   NAME_osmesa with KILN_TEST_BACKEND=osmesa (tests/harness.c honours it).
# Without the GL backend built in, test_cross_backend skips (77) and the
# _osmesa variants are not added.
include(${PROJECT_SOURCE_DIR}/examples/sources.cmake)
include(${PROJECT_SOURCE_DIR}/examples/stb.cmake)

if(TARGET test_cross_backend)
  target_sources(test_cross_backend PRIVATE ${KILN_DEMO_SCENE_SOURCES})
  target_include_directories(test_cross_backend PRIVATE ${KILN_DEMO_DIR})
  target_compile_definitions(test_cross_backend PRIVATE _POSIX_C_SOURCE=200809L)
  target_link_libraries(test_cross_backend PRIVATE ${KILN_STB_TARGET} m)
  set_tests_properties(test_cross_backend PROPERTIES SKIP_RETURN_CODE 77
    WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
endif()

if(KILN_HAVE_GL)
  foreach(name test_validate_context test_validate_resources test_async_equals_serial test_map_waits
               test_transfer_ring test_lifetime test_sync_fences test_sync_contexts test_sync_errors test_swapchain
               test_raster_async)
    if(TARGET ${name})
      add_test(NAME ${name}_osmesa COMMAND ${name})
      # test_raster_async: fewer sequences (llvmpipe is slower per small
      # scene than soft); its ASYNC/SERIAL comparison is the same.
      set_tests_properties(${name}_osmesa PROPERTIES TIMEOUT 600 ENVIRONMENT
        "KILN_TEST_BACKEND=osmesa;KILN_RASTER_FUZZ=150;KILN_FUZZ_SEQUENCES=500;LSAN_OPTIONS=suppressions=${CMAKE_CURRENT_SOURCE_DIR}/lsan.supp;TSAN_OPTIONS=suppressions=${CMAKE_CURRENT_SOURCE_DIR}/tsan.supp")
    endif()
  endforeach()
endif()

# The same cross-check through surfaceless EGL, the provider Mesa keeps
# from 25.1 on (the default run uses OSMesa when it is built in).
if(TARGET test_cross_backend AND "egl" IN_LIST KILN_GL_PROVIDERS AND "osmesa" IN_LIST KILN_GL_PROVIDERS)
  add_test(NAME test_cross_backend_egl COMMAND test_cross_backend)
  set_tests_properties(test_cross_backend_egl PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600
    WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR} ENVIRONMENT
    "KILN_GL_PROVIDER=egl;LSAN_OPTIONS=suppressions=${CMAKE_CURRENT_SOURCE_DIR}/lsan.supp;TSAN_OPTIONS=suppressions=${CMAKE_CURRENT_SOURCE_DIR}/tsan.supp")
endif()
