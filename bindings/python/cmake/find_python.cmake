# Python, nanobind and NumPy's headers for the extension. Sets
# kiln_python_found, kiln_numpy_include and kiln_python_version; in kiln's own
# build, a missing piece skips the package with a message (the rest of kiln
# does not need Python), under pip it is an error.
set(kiln_python_found OFF)
set(kiln_python_required "")
if(kiln_python_standalone)
  set(kiln_python_required REQUIRED)
endif()

# kiln's own build: the repository's .venv (scripts/setup.sh) unless told otherwise.
if(NOT kiln_python_standalone AND NOT DEFINED Python_EXECUTABLE AND EXISTS ${PROJECT_SOURCE_DIR}/.venv/bin/python)
  set(Python_EXECUTABLE ${PROJECT_SOURCE_DIR}/.venv/bin/python)
endif()
find_package(Python 3.9 COMPONENTS Interpreter Development.Module ${kiln_python_required})
if(NOT Python_FOUND)
  message(STATUS "kiln: no Python with its headers, so no Python package (scripts/setup.sh makes .venv)")
  return()
endif()

execute_process(COMMAND ${Python_EXECUTABLE} -m nanobind --cmake_dir
                OUTPUT_VARIABLE kiln_nanobind_dir OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
execute_process(COMMAND ${Python_EXECUTABLE} -c "import numpy; print(numpy.get_include())"
                OUTPUT_VARIABLE kiln_numpy_include OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(kiln_nanobind_dir)
  find_package(nanobind CONFIG HINTS ${kiln_nanobind_dir} ${kiln_python_required})
endif()
if(NOT nanobind_FOUND OR NOT kiln_numpy_include)
  if(kiln_python_standalone)
    message(FATAL_ERROR "kiln: ${Python_EXECUTABLE} lacks nanobind or NumPy")
  endif()
  message(STATUS "kiln: ${Python_EXECUTABLE} lacks nanobind or NumPy, so no Python package "
                 "(scripts/setup.sh installs them in .venv)")
  return()
endif()

if(kiln_python_standalone)
  set(kiln_python_version ${kiln_VERSION})
else()
  set(kiln_python_version ${PROJECT_VERSION})
endif()
message(STATUS "kiln: Python package with ${Python_EXECUTABLE} (${Python_VERSION}), nanobind ${nanobind_VERSION}")
set(kiln_python_found ON)
# For the tests (tests/bindings/python), outside this folder's scope.
set(KILN_PYTHON_INTERPRETER ${Python_EXECUTABLE} CACHE INTERNAL "The Python the kiln package is built for")
