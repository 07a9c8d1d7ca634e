# What a normal build needs to build the kgate Python package's engine into the build tree (root
# CMakeLists.txt, KGATE_BUILD_PYTHON_ENGINE): the Python that scripts/run.sh runs the peers with
# (python3 on PATH, unless Python_EXECUTABLE is given), its headers, and nanobind installed in it,
# found where it says (python3 -m nanobind --cmake_dir). Sets KGATE_PYTHON_ENGINE_MISSING to what is
# missing, empty when nothing is, and nanobind_ROOT for python/CMakeLists.txt's find_package.
# Looked up at every configure, so that installing nanobind is enough for the next build.
set(KGATE_PYTHON_ENGINE_MISSING "")
if(NOT Python_EXECUTABLE)
  find_program(Python_EXECUTABLE python3)
endif()
find_package(Python 3.10 COMPONENTS Interpreter Development.Module)
if(NOT Python_Interpreter_FOUND)
  set(KGATE_PYTHON_ENGINE_MISSING "no python3 3.10 or newer")
elseif(NOT Python_Development.Module_FOUND)
  set(KGATE_PYTHON_ENGINE_MISSING "no headers for ${Python_EXECUTABLE}: the python3-dev package")
else()
  execute_process(COMMAND "${Python_EXECUTABLE}" -m nanobind --cmake_dir OUTPUT_VARIABLE kgate_nanobind_dir
                  OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE kgate_nanobind_status)
  if(kgate_nanobind_status EQUAL 0)
    set(nanobind_ROOT "${kgate_nanobind_dir}")
  else()
    set(KGATE_PYTHON_ENGINE_MISSING "no nanobind in ${Python_EXECUTABLE}")
  endif()
endif()
