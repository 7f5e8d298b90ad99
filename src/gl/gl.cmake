# src/gl: the osmesa backend and its GL context providers (provider.h):
# libOSMesa (Debian: libosmesa6-dev) and surfaceless EGL (libegl-dev), the
# one Mesa keeps from 25.1 on. Either is enough; with neither, kiln builds
# without src/gl and KILN_BACKEND_OSMESA answers KILN_E_UNSUPPORTED.
#
# Included by the top-level CMakeLists.txt once kiln_objects exists and
# KILN_PRIVATE_LIBS is set, and before kiln_static / kiln_shared link
# KILN_PRIVATE_LIBS. Sets, for tests/ and examples/:
#   KILN_HAVE_GL        ON when src/gl is built
#   KILN_GL_PROVIDERS   the providers built in: "osmesa", "egl", or both
#
# kiln_objects takes the compile usage (include dirs, cflags) from the
# PkgConfig:: imported targets, but KILN_PRIVATE_LIBS gets the plain library
# paths, as for stb: that list is what kiln_static exports and what
# cmake/install.cmake turns into kiln.pc's Libs.private, and neither can
# carry a non-exported imported target.

option(KILN_WITH_GL "Build the osmesa backend when libOSMesa or libEGL is found" ON)
option(KILN_WITH_OSMESA "Let the osmesa backend use libOSMesa when found" ON)
option(KILN_WITH_EGL "Let the osmesa backend use surfaceless EGL when found" ON)

set(KILN_HAVE_GL OFF)
set(KILN_GL_PROVIDERS "")
set(_kiln_gl_why "")

if(NOT KILN_WITH_GL)
  set(_kiln_gl_why "KILN_WITH_GL is OFF")
else()
  find_package(PkgConfig QUIET)
  # Every GL call goes through the function table of glapi.h, typed by
  # glcorearb.h (Debian: libgl-dev, which both -dev packages pull in).
  find_path(KILN_GLCOREARB_INCLUDE GL/glcorearb.h)
  if(NOT PKG_CONFIG_FOUND)
    set(_kiln_gl_why "pkg-config not found: apt install pkg-config")
  elseif(NOT KILN_GLCOREARB_INCLUDE)
    set(_kiln_gl_why "GL/glcorearb.h not found: apt install libgl-dev")
  else()
    if(KILN_WITH_OSMESA)
      pkg_check_modules(KILN_OSMESA QUIET IMPORTED_TARGET osmesa)
      if(KILN_OSMESA_FOUND)
        list(APPEND KILN_GL_PROVIDERS osmesa)
      endif()
    endif()
    if(KILN_WITH_EGL)
      pkg_check_modules(KILN_EGL QUIET IMPORTED_TARGET egl)
      if(KILN_EGL_FOUND)
        list(APPEND KILN_GL_PROVIDERS egl)
      endif()
    endif()
    if(NOT KILN_GL_PROVIDERS)
      set(_kiln_gl_why "neither libOSMesa nor libEGL found: apt install libosmesa6-dev libegl-dev")
    endif()
  endif()
endif()

if(KILN_GL_PROVIDERS)
  set(KILN_HAVE_GL ON)
  file(GLOB KILN_GL_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/*.c)
  target_sources(kiln_objects PRIVATE ${KILN_GL_SOURCES})
  target_include_directories(kiln_objects PRIVATE ${KILN_GLCOREARB_INCLUDE})
  target_compile_definitions(kiln_objects PRIVATE KILN_HAVE_GL=1)
  if(KILN_OSMESA_FOUND AND "osmesa" IN_LIST KILN_GL_PROVIDERS)
    target_compile_definitions(kiln_objects PRIVATE KILN_HAVE_OSMESA=1)
    target_link_libraries(kiln_objects PRIVATE PkgConfig::KILN_OSMESA)
    list(APPEND KILN_PRIVATE_LIBS ${KILN_OSMESA_LINK_LIBRARIES})
  endif()
  if(KILN_EGL_FOUND AND "egl" IN_LIST KILN_GL_PROVIDERS)
    target_compile_definitions(kiln_objects PRIVATE KILN_HAVE_EGL=1)
    target_link_libraries(kiln_objects PRIVATE PkgConfig::KILN_EGL)
    list(APPEND KILN_PRIVATE_LIBS ${KILN_EGL_LINK_LIBRARIES})
  endif()
  list(LENGTH KILN_GL_PROVIDERS _kiln_gl_n)
  if(_kiln_gl_n EQUAL 2)
    message(STATUS "kiln: osmesa backend on (GL providers osmesa and egl: "
                   "osmesa unless KILN_GL_PROVIDER=egl)")
  else()
    message(STATUS "kiln: osmesa backend on (GL provider ${KILN_GL_PROVIDERS} only)")
  endif()
  unset(_kiln_gl_n)
else()
  message(STATUS "kiln: osmesa backend off (${_kiln_gl_why})")
endif()
unset(_kiln_gl_why)
