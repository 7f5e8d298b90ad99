# test_gl_provider (tests/test_gl_provider.c): the GL context providers of
# the osmesa backend, each built-in one on its own. Without the backend it
# skips (77).
if(TARGET test_gl_provider)
  set_tests_properties(test_gl_provider PROPERTIES SKIP_RETURN_CODE 77)
endif()
if(TARGET test_gl_shaders)
  set_tests_properties(test_gl_shaders PROPERTIES SKIP_RETURN_CODE 77)
endif()
