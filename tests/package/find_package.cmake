# cmake -DKILN_BUILD_DIR=... -DPREFIX=... -DWORK=... -DCONSUMER_SOURCE=...
#       -DGENERATOR=... [-DMAKE_PROGRAM=...] -DC_COMPILER=... [-DCONFIG=...]
#       [-DEXTRA_FLAGS=...] -P find_package.cmake
#
# Installs the kiln build into PREFIX, then configures, builds and runs the
# consumer project with find_package(kiln CONFIG REQUIRED), once against
# kiln::kiln (shared) and once against kiln::kiln_static. EXTRA_FLAGS carries
# the sanitizer flags of a sanitizer build, which the consumer must link with.
cmake_minimum_required(VERSION 3.19) # COMMAND_ERROR_IS_FATAL

foreach(v KILN_BUILD_DIR PREFIX WORK CONSUMER_SOURCE GENERATOR C_COMPILER)
  if(NOT DEFINED ${v} OR "${${v}}" STREQUAL "")
    message(FATAL_ERROR "find_package.cmake: -D${v}= is required")
  endif()
endforeach()

file(REMOVE_RECURSE "${PREFIX}" "${WORK}")
get_filename_component(log_dir "${PREFIX}" DIRECTORY)
file(MAKE_DIRECTORY "${log_dir}")

set(config_args)
if(CONFIG)
  set(config_args --config ${CONFIG})
endif()
execute_process(
  COMMAND ${CMAKE_COMMAND} --install ${KILN_BUILD_DIR} --prefix ${PREFIX} ${config_args}
  OUTPUT_FILE ${log_dir}/install.log
  COMMAND_ERROR_IS_FATAL ANY)

# The prefix holds the public header and not the internal one.
file(GLOB_RECURSE headers RELATIVE ${PREFIX} ${PREFIX}/*.h)
if(NOT headers STREQUAL "include/kiln.h")
  message(FATAL_ERROR "expected exactly include/kiln.h to be installed, got: ${headers}")
endif()

set(configure_args
  -S ${CONSUMER_SOURCE} -B ${WORK}
  -G ${GENERATOR}
  -DCMAKE_C_COMPILER=${C_COMPILER}
  -DCMAKE_PREFIX_PATH=${PREFIX}
  # Nothing but PREFIX may provide kiln (no user package registry).
  -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF
  "-DCMAKE_C_FLAGS=${EXTRA_FLAGS}"
  "-DCMAKE_EXE_LINKER_FLAGS=${EXTRA_FLAGS}")
if(MAKE_PROGRAM)
  list(APPEND configure_args -DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM})
endif()
if(CONFIG)
  list(APPEND configure_args -DCMAKE_BUILD_TYPE=${CONFIG})
endif()
execute_process(COMMAND ${CMAKE_COMMAND} ${configure_args} COMMAND_ERROR_IS_FATAL ANY)

# find_package must have found the package we just installed.
file(STRINGS ${WORK}/CMakeCache.txt kiln_dir REGEX "^kiln_DIR:")
string(REGEX REPLACE "^kiln_DIR:[A-Z]+=" "" kiln_dir "${kiln_dir}")
file(REAL_PATH "${kiln_dir}" kiln_dir)
file(REAL_PATH "${PREFIX}" real_prefix)
string(FIND "${kiln_dir}" "${real_prefix}/" at)
if(NOT at EQUAL 0)
  message(FATAL_ERROR "find_package found kiln at '${kiln_dir}', not under '${real_prefix}'")
endif()
message(STATUS "find_package(kiln) found ${kiln_dir}")

execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK} ${config_args}
  COMMAND_ERROR_IS_FATAL ANY)

foreach(exe kiln_consumer kiln_consumer_static)
  set(path ${WORK}/${exe})
  if(NOT EXISTS ${path} AND CONFIG)
    set(path ${WORK}/${CONFIG}/${exe}) # multi-config generators
  endif()
  execute_process(COMMAND ${path} COMMAND_ERROR_IS_FATAL ANY)
endforeach()
message(STATUS "package_find_package: installed, found, built and ran against kiln::kiln "
               "and kiln::kiln_static")
