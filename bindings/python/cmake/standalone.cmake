# pip install ./bindings/python: where libkiln comes from.
# - An installed kiln (cmake --install), found by find_package: given with
#   -Dkiln_DIR=... or CMAKE_PREFIX_PATH (pip: --config-settings=cmake.define.kiln_DIR=...),
#   or in a standard prefix. The module then loads it from there (RPATH).
# - Else kiln is built here from this repository (tests and benchmarks off,
#   only libkiln, its compiler module and compile worker), and all three go
#   into the wheel beside the module (wheel_install.cmake).
find_package(kiln 0.1 CONFIG QUIET)
if(kiln_FOUND)
  get_target_property(kiln_location kiln::kiln LOCATION)
  get_filename_component(kiln_python_rpath ${kiln_location} DIRECTORY)
  set(kiln_python_bundle OFF)
  message(STATUS "kiln: the Python package uses the installed kiln ${kiln_VERSION} in ${kiln_python_rpath}")
else()
  get_filename_component(kiln_repository ${CMAKE_CURRENT_SOURCE_DIR}/../.. ABSOLUTE)
  if(NOT EXISTS ${kiln_repository}/api/include/kiln/kiln.hpp)
    message(FATAL_ERROR "kiln: no installed kiln found (give -Dkiln_DIR=<prefix>/lib/cmake/kiln) and "
                        "${kiln_repository} is not kiln's repository to build it from")
  endif()
  set(KILN_BUILD_TESTS OFF CACHE BOOL "" FORCE)
  set(KILN_BUILD_BENCHMARKS OFF CACHE BOOL "" FORCE)
  set(KILN_PYTHON_STANDALONE ON)  # bindings/CMakeLists.txt: this file builds the module, not kiln's
  add_subdirectory(${kiln_repository} kiln EXCLUDE_FROM_ALL)
  get_target_property(kiln_VERSION kiln VERSION)
  set(kiln_python_rpath "$ORIGIN/lib")
  set(kiln_python_bundle ON)
  message(STATUS "kiln: the Python package builds kiln ${kiln_VERSION} from ${kiln_repository}")
endif()
