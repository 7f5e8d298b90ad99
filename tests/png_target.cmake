# test_png_target reads the PNG files back with stb_image. Debian's libstb
# ships the compiled implementation (the top-level CMakeLists.txt found it
# for the PNG target's stb_image_write); the test links the same library.
if(TARGET test_png_target)
  if(NOT KILN_STB_LIBRARY)
    find_library(KILN_STB_LIBRARY NAMES stb REQUIRED)
  endif()
  if(NOT KILN_STB_INCLUDE)
    find_path(KILN_STB_INCLUDE stb/stb_image.h REQUIRED)
  endif()
  target_include_directories(test_png_target PRIVATE ${KILN_STB_INCLUDE})
  target_link_libraries(test_png_target PRIVATE ${KILN_STB_LIBRARY})
endif()
