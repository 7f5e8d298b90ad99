# Install rules and the exported package. Included by the top-level
# CMakeLists.txt once kiln_static and kiln_shared exist.
#
# An install prefix then holds:
#   include/kiln.h                       the whole public API (test_hooks.h is internal)
#   lib/libkiln.so*, lib/libkiln.a       both libraries (OUTPUT_NAME kiln)
#   lib/cmake/kiln/kiln*.cmake           find_package(kiln CONFIG): kiln::kiln (shared)
#                                        and kiln::kiln_static
#   lib/pkgconfig/kiln.pc                pkg-config --cflags --libs kiln
#
# Both files are relocatable: the CMake package finds itself relative to its
# own directory, and kiln.pc derives its prefix from ${pcfiledir}, so
# `cmake --install build --prefix DIR` and DESTDIR staging both work.

include(CMakePackageConfigHelpers)

set(KILN_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/kiln CACHE STRING
    "Where kilnConfig.cmake goes, relative to the install prefix")
mark_as_advanced(KILN_INSTALL_CMAKEDIR)

# The in-tree ALIAS targets are kiln::kiln and kiln::kiln_static; give the
# exported targets the same names so code reads alike in and out of tree.
set_target_properties(kiln_shared PROPERTIES EXPORT_NAME kiln)
set_target_properties(kiln_static PROPERTIES EXPORT_NAME kiln_static)

install(TARGETS kiln_shared kiln_static
  EXPORT kilnTargets
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})

# Only the public header: src/api/test_hooks.h stays inside the tree.
install(FILES ${PROJECT_SOURCE_DIR}/include/kiln.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

install(EXPORT kilnTargets
  NAMESPACE kiln::
  FILE kilnTargets.cmake
  DESTINATION ${KILN_INSTALL_CMAKEDIR})

configure_package_config_file(
  ${CMAKE_CURRENT_LIST_DIR}/kilnConfig.cmake.in
  ${PROJECT_BINARY_DIR}/kilnConfig.cmake
  INSTALL_DESTINATION ${KILN_INSTALL_CMAKEDIR})
# 0.x: a minor release may break the API, so only the same minor matches.
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/kilnConfigVersion.cmake
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMinorVersion)
install(FILES
  ${PROJECT_BINARY_DIR}/kilnConfig.cmake
  ${PROJECT_BINARY_DIR}/kilnConfigVersion.cmake
  DESTINATION ${KILN_INSTALL_CMAKEDIR})

# pkg-config. The prefix is computed from the .pc file's own location when
# the install dirs are relative (the usual case), so the file stays right
# whatever --prefix or DESTDIR the install uses.
set(KILN_PC_PRIVATE_LIBS "")
foreach(_kiln_lib ${KILN_PRIVATE_LIBS})
  get_filename_component(_kiln_name "${_kiln_lib}" NAME_WE)
  string(REGEX REPLACE "^lib" "" _kiln_name "${_kiln_name}")
  string(APPEND KILN_PC_PRIVATE_LIBS " -l${_kiln_name}")
endforeach()
set(_kiln_pcdir ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
if(IS_ABSOLUTE "${_kiln_pcdir}")
  set(KILN_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
else()
  file(RELATIVE_PATH _kiln_up "/kiln-prefix/${_kiln_pcdir}" "/kiln-prefix")
  string(REGEX REPLACE "/$" "" _kiln_up "${_kiln_up}")
  set(KILN_PC_PREFIX "\${pcfiledir}/${_kiln_up}")
endif()
foreach(_kiln_dir LIBDIR INCLUDEDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${_kiln_dir}}")
    set(KILN_PC_${_kiln_dir} "${CMAKE_INSTALL_${_kiln_dir}}")
  else()
    set(KILN_PC_${_kiln_dir} "\${prefix}/${CMAKE_INSTALL_${_kiln_dir}}")
  endif()
endforeach()
configure_file(${CMAKE_CURRENT_LIST_DIR}/kiln.pc.in ${PROJECT_BINARY_DIR}/kiln.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/kiln.pc DESTINATION ${_kiln_pcdir})
unset(_kiln_pcdir)
unset(_kiln_up)
unset(_kiln_dir)
