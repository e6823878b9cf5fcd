# Fetches cJSON's C source for the wasm build from Debian's source package at configure time
# (nothing third-party is committed). Pinned to the installed libcjson-dev version when there
# is one, so native and wasm builds compile the same cJSON. Produces:
#   MXW_CJSON_SOURCES     the .c file to compile into the module
#   MXW_CJSON_INCLUDE_DIR a directory holding cjson/cJSON.h (the same include path as native)
set(_cjson_root "${CMAKE_BINARY_DIR}/_deps/cjson")
file(GLOB _cjson_dirs "${_cjson_root}/cjson-*")
if(NOT _cjson_dirs)
  file(MAKE_DIRECTORY "${_cjson_root}")
  execute_process(COMMAND dpkg-query -W -f=\${version} libcjson-dev
                  OUTPUT_VARIABLE _cjson_ver RESULT_VARIABLE _rc ERROR_QUIET)
  set(_spec cjson)
  if(_rc EQUAL 0 AND _cjson_ver)
    set(_spec "cjson=${_cjson_ver}")
  endif()
  message(STATUS "Fetching cJSON source: apt-get source ${_spec}")
  execute_process(COMMAND apt-get source -qq -o APT::Sandbox::User=root ${_spec}
                  WORKING_DIRECTORY "${_cjson_root}" RESULT_VARIABLE _rc OUTPUT_QUIET)
  if(NOT _rc EQUAL 0 AND NOT _spec STREQUAL "cjson")
    execute_process(COMMAND apt-get source -qq -o APT::Sandbox::User=root cjson
                    WORKING_DIRECTORY "${_cjson_root}" RESULT_VARIABLE _rc OUTPUT_QUIET)
  endif()
  file(GLOB _cjson_dirs "${_cjson_root}/cjson-*")
  if(NOT _cjson_dirs)
    message(FATAL_ERROR "apt-get source cjson failed (rc ${_rc}); run scripts/setup.sh, which adds deb-src entries")
  endif()
endif()
list(GET _cjson_dirs 0 _cjson_dir)
file(MAKE_DIRECTORY "${CMAKE_BINARY_DIR}/_deps/include/cjson")
configure_file("${_cjson_dir}/cJSON.h" "${CMAKE_BINARY_DIR}/_deps/include/cjson/cJSON.h" COPYONLY)
set(MXW_CJSON_SOURCES "${_cjson_dir}/cJSON.c")
set(MXW_CJSON_INCLUDE_DIR "${CMAKE_BINARY_DIR}/_deps/include")
