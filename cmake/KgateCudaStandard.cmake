# CMake before 3.26 does not know nvcc's C++20 flag (nvcc has had it since 12.0): teach it, so
# that `cuda_std_20`, which kgate's CUDA modules require of everything that links them, resolves.
# Included by kgate's build and by the installed kgateConfig.cmake (the consumer's CMake needs the
# same lesson to compile its kernels against kgate's headers, which use C++20).
if(NOT CMAKE_CUDA_COMPILER_LOADED)
  return()
endif()
if(NOT "cuda_std_20" IN_LIST CMAKE_CUDA_COMPILE_FEATURES AND CMAKE_CUDA_COMPILER_VERSION VERSION_GREATER_EQUAL 12.0)
  set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
  set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
  list(APPEND CMAKE_CUDA_COMPILE_FEATURES cuda_std_20)
  set(CMAKE_CUDA20_COMPILE_FEATURES cuda_std_20)
endif()
