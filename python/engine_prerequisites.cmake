# What a normal build needs to build the kgate Python package's engine into the build tree (root
# CMakeLists.txt, KGATE_BUILD_PYTHON_ENGINE): the Python that scripts/run.sh runs the peers with
# (python3 on PATH, unless Python_EXECUTABLE is given) and its headers. Not nanobind: where that
# Python has none, python/CMakeLists.txt binds the engine with third_party/nanobind, so that an
# offline GPU machine builds it too. Sets KGATE_PYTHON_ENGINE_MISSING to what is missing and how to
# get it, empty when nothing is, and nanobind_ROOT to the Python's own nanobind where it has one,
# which python/CMakeLists.txt prefers. Looked up at every configure, so that installing the headers
# is enough for the next build.
set(KGATE_PYTHON_ENGINE_MISSING "")
if(NOT Python_EXECUTABLE)
  find_program(Python_EXECUTABLE python3)
endif()
find_package(Python 3.10 COMPONENTS Interpreter Development.Module)
if(NOT Python_Interpreter_FOUND)
  set(KGATE_PYTHON_ENGINE_MISSING "no python3 3.10 or newer on PATH, nor Python_EXECUTABLE")
elseif(NOT Python_Development.Module_FOUND)
  set(KGATE_PYTHON_ENGINE_MISSING "no headers (Python.h) for ${Python_EXECUTABLE}: on Debian or Ubuntu, apt install "
                                  "python3-dev, or python${Python_VERSION_MAJOR}.${Python_VERSION_MINOR}-dev for that version")
else()
  execute_process(COMMAND "${Python_EXECUTABLE}" -m nanobind --cmake_dir OUTPUT_VARIABLE kgate_nanobind_dir
                  OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE kgate_nanobind_status)
  if(kgate_nanobind_status EQUAL 0)
    set(nanobind_ROOT "${kgate_nanobind_dir}")
  endif()
endif()
