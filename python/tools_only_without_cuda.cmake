# pip install . (pyproject.toml; scikit-build-core sets SKBUILD) on a machine without the CUDA
# Toolkit: the root CMakeLists.txt includes this before project(), so that the package builds
# tools-only there (the `kgate` command line and the result tools, no engine) instead of stopping
# at project()'s CUDA. A KGATE_TOOLS_ONLY given by the user is kept as given.
#
# The compiler is looked for where CMake's own CUDA detection looks (CMAKE_CUDA_COMPILER, CUDACXX,
# nvcc on PATH or in $CUDA_PATH/bin) and in /usr/local/cuda/bin, where NVIDIA's packages put nvcc
# without adding it to PATH (scripts/common.sh looks there too); found there, it is the one used.
# KGATE_ENGINE_ABSENT_REASON says why a tools-only package has no engine: python/CMakeLists.txt
# writes it into the package, and kgate.EngineUnavailable repeats it.
if(DEFINED KGATE_TOOLS_ONLY)
  if(KGATE_TOOLS_ONLY)
    set(KGATE_ENGINE_ABSENT_REASON "it was built with KGATE_TOOLS_ONLY=ON")
  endif()
  return()
endif()
if(CMAKE_CUDA_COMPILER OR DEFINED ENV{CUDACXX})
  return()
endif()
find_program(KGATE_NVCC nvcc HINTS "$ENV{CUDA_PATH}/bin" PATHS /usr/local/cuda/bin NO_CACHE)
if(KGATE_NVCC)
  set(CMAKE_CUDA_COMPILER "${KGATE_NVCC}" CACHE FILEPATH "CUDA compiler")
else()
  set(KGATE_ENGINE_ABSENT_REASON
      "no CUDA compiler was found at build time (no nvcc on PATH, in $CUDA_PATH/bin or /usr/local/cuda/bin; CUDACXX unset)")
  message(STATUS "kgate: ${KGATE_ENGINE_ABSENT_REASON}: the Python package installs the command line and the "
                 "result tools, without the measurement engine")
  # A normal variable: root's option(KGATE_TOOLS_ONLY) keeps it (CMP0077), and every configure looks again.
  set(KGATE_TOOLS_ONLY ON)
endif()
