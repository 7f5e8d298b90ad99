# Finds Debian's libstb (libstb-dev): the headers under stb/ and a shared
# library that carries the implementations (stb_image, stb_image_write), so
# users include the headers and link, without defining *_IMPLEMENTATION.
# Sets KILN_STB_TARGET to a target to link, or leaves it empty.
# Included by examples/CMakeLists.txt and tests/golden.cmake.
set(KILN_STB_TARGET "")
find_package(PkgConfig QUIET)
if(PKG_CONFIG_FOUND)
  pkg_check_modules(KILN_STB QUIET IMPORTED_TARGET stb)
endif()

if(TARGET PkgConfig::KILN_STB)
  set(KILN_STB_TARGET PkgConfig::KILN_STB)
else()
  find_library(KILN_STB_LIBRARY stb)
  find_path(KILN_STB_INCLUDE_DIR stb/stb_image_write.h)
  if(KILN_STB_LIBRARY AND KILN_STB_INCLUDE_DIR)
    if(NOT TARGET kiln_stb)
      add_library(kiln_stb UNKNOWN IMPORTED)
      set_target_properties(kiln_stb PROPERTIES
        IMPORTED_LOCATION ${KILN_STB_LIBRARY}
        INTERFACE_INCLUDE_DIRECTORIES ${KILN_STB_INCLUDE_DIR})
    endif()
    set(KILN_STB_TARGET kiln_stb)
  endif()
endif()
