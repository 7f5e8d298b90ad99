# Packaging: an installed kiln works for a project outside this tree.
#
#   package_find_package   cmake --install into a scratch prefix, then
#                          find_package(kiln CONFIG REQUIRED) from
#                          tests/package/consumer, linking kiln::kiln and
#                          kiln::kiln_static; both programs run
#   package_pkg_config     the same prefix layout, consumed with
#                          cc main.c $(pkg-config --cflags --libs kiln),
#                          and statically with --static; skipped (77) only if
#                          pkg-config is missing and cannot be installed
#
# Sanitizer builds put -fsanitize=... on every link (add_link_options); an
# installed sanitized library needs the same on the consumer's link, so the
# directory's link options are passed on.

set(KILN_PKG_DIR ${CMAKE_CURRENT_SOURCE_DIR}/package)
set(KILN_PKG_OUT ${CMAKE_CURRENT_BINARY_DIR}/package)
get_property(_kiln_link_options DIRECTORY PROPERTY LINK_OPTIONS)
string(REPLACE ";" " " KILN_PKG_EXTRA_FLAGS "${_kiln_link_options}")
unset(_kiln_link_options)

add_test(NAME package_find_package
  COMMAND ${CMAKE_COMMAND}
          -DKILN_BUILD_DIR=${PROJECT_BINARY_DIR}
          -DPREFIX=${KILN_PKG_OUT}/find_package/prefix
          -DWORK=${KILN_PKG_OUT}/find_package/consumer
          -DCONSUMER_SOURCE=${KILN_PKG_DIR}/consumer
          -DGENERATOR=${CMAKE_GENERATOR}
          -DMAKE_PROGRAM=${CMAKE_MAKE_PROGRAM}
          -DC_COMPILER=${CMAKE_C_COMPILER}
          -DCONFIG=$<CONFIG>
          -DEXTRA_FLAGS=${KILN_PKG_EXTRA_FLAGS}
          -P ${KILN_PKG_DIR}/find_package.cmake)

find_program(KILN_BASH bash)
if(KILN_BASH)
  add_test(NAME package_pkg_config
    COMMAND ${KILN_BASH} ${KILN_PKG_DIR}/pkg_config.sh
            ${PROJECT_BINARY_DIR}
            ${KILN_PKG_OUT}/pkg_config/prefix
            ${KILN_PKG_OUT}/pkg_config/work
            ${KILN_PKG_DIR}/consumer/main.c
            ${CMAKE_C_COMPILER}
            $<CONFIG>
            ${KILN_PKG_EXTRA_FLAGS})
  set_tests_properties(package_pkg_config PROPERTIES SKIP_RETURN_CODE 77
    ENVIRONMENT CMAKE=${CMAKE_COMMAND})
  set(_kiln_pkg_tests package_find_package package_pkg_config)
else()
  message(STATUS "kiln: no bash; package_pkg_config not added")
  set(_kiln_pkg_tests package_find_package)
endif()

# cmake --install writes install_manifest.txt into the build tree: one
# install at a time.
set_tests_properties(${_kiln_pkg_tests} PROPERTIES
  RESOURCE_LOCK kiln_build_tree_install
  TIMEOUT 300)
unset(_kiln_pkg_tests)
