# test_x11_target starts its own Xvfb and reads the window back with Xlib.
# It exits 77 (skipped) only when Xvfb cannot run on this machine.
if(TARGET test_x11_target)
  find_package(X11)
  if(X11_FOUND)
    target_include_directories(test_x11_target PRIVATE ${X11_INCLUDE_DIR})
    target_link_libraries(test_x11_target PRIVATE ${X11_X11_LIB})
    target_compile_definitions(test_x11_target PRIVATE KILN_TEST_HAVE_XLIB)
  endif()
  set_tests_properties(test_x11_target PROPERTIES SKIP_RETURN_CODE 77)
endif()
