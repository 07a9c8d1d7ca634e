# Finds kgate's dependencies with find_package. A missing package is downloaded at a pinned
# version and hash when the network allows (KGATE_FETCH_MISSING), or taken from a source tree
# given as FETCHCONTENT_SOURCE_DIR_<PACKAGE> (a mirror; CMake's own override), and is then built
# and installed beside kgate, so that the installed package finds it; offline, configuration stops
# with the package's name and the command that installs it.
include(FetchContent)

if(NOT KGATE_TOOLS_ONLY)
  find_package(CUDAToolkit 12.0 REQUIRED)
  # cuBLAS only for kgate's own gemv/cublas variant: the harness loads it at run time for the GEMM
  # ceiling (src/kgate/measure/cublas_loader.cpp) and runs without it.
  set(kgate_cuda_targets CUDA::cudart CUDA::cupti)
  if(KGATE_BUILD_KERNELS)
    list(APPEND kgate_cuda_targets CUDA::cublas)
  endif()
  foreach(target IN LISTS kgate_cuda_targets)
    if(NOT TARGET ${target})
      message(FATAL_ERROR "kgate: the CUDA Toolkit at ${CUDAToolkit_LIBRARY_DIR} lacks ${target}. "
                          "Install the full toolkit (cuda-toolkit-12-x or newer, with cuBLAS and CUPTI).")
    endif()
  endforeach()
endif()

# kgate_require(<package> TARGET <imported target> APT <debian package> URL <url> SHA256 <hash>)
function(kgate_require package)
  cmake_parse_arguments(arg "" "TARGET;APT;URL;SHA256" "" ${ARGN})
  find_package(${package} QUIET)
  if(TARGET ${arg_TARGET})
    message(STATUS "kgate: ${package} found (${${package}_DIR})")
    return()
  endif()
  set(install_hint "install it with: sudo apt-get install ${arg_APT}  (or run scripts/bootstrap.sh)")
  string(TOUPPER "${package}" upper)
  set(archive "${arg_URL}")
  if(FETCHCONTENT_SOURCE_DIR_${upper})
    message(STATUS "kgate: ${package} not found; building it from ${FETCHCONTENT_SOURCE_DIR_${upper}}")
  elseif(NOT KGATE_FETCH_MISSING)
    message(FATAL_ERROR "kgate: ${package} not found and KGATE_FETCH_MISSING is OFF; ${install_hint}")
  else()
    # Probe the download ourselves so that an offline machine gets one clear sentence rather
    # than FetchContent's sub-build log.
    get_filename_component(archive_name "${arg_URL}" NAME)
    set(archive "${CMAKE_BINARY_DIR}/_deps/downloads/${package}-${archive_name}")
    if(NOT EXISTS "${archive}")
      message(STATUS "kgate: ${package} not found; downloading ${arg_URL}")
      file(DOWNLOAD "${arg_URL}" "${archive}" STATUS status TIMEOUT 60
           EXPECTED_HASH SHA256=${arg_SHA256})
      list(GET status 0 code)
      if(NOT code EQUAL 0)
        file(REMOVE "${archive}")
        list(GET status 1 reason)
        message(FATAL_ERROR "kgate: ${package} not found and could not be downloaded (${reason}); ${install_hint}")
      endif()
    endif()
  endif()
  FetchContent_Declare(${package} URL "${archive}" URL_HASH SHA256=${arg_SHA256} SYSTEM)
  FetchContent_MakeAvailable(${package})
  if(NOT TARGET ${arg_TARGET})
    message(FATAL_ERROR "kgate: fetched ${package} but it did not define ${arg_TARGET}")
  endif()
endfunction()

# Results files may be gzipped (.json.gz). zlib is part of every toolchain image; only its
# headers may be missing.
find_package(ZLIB QUIET)
if(NOT TARGET ZLIB::ZLIB)
  message(FATAL_ERROR "kgate: zlib not found; install it with: sudo apt-get install zlib1g-dev  (or run scripts/bootstrap.sh)")
endif()

# A fetched dependency installs with kgate (cmake/KgateInstall.cmake exports against it).
set(JSON_BuildTests OFF CACHE INTERNAL "")
set(JSON_Install ON CACHE INTERNAL "")
kgate_require(nlohmann_json TARGET nlohmann_json::nlohmann_json APT nlohmann-json3-dev
  URL https://github.com/nlohmann/json/releases/download/v3.11.3/json.tar.xz
  SHA256 d6c65aca6b1ed68e7a182f4757257b107ae403032760ed6ef121c9d55e81757d)

set(INSTALL_GTEST ON CACHE INTERNAL "")
set(BUILD_GMOCK OFF CACHE INTERNAL "")
kgate_require(GTest TARGET GTest::gtest APT libgtest-dev
  URL https://github.com/google/googletest/archive/refs/tags/v1.14.0.tar.gz
  SHA256 8ad598c73ad796e0d8280b082cebd82a630d73e73cd3c70057938a6501bba5d7)

if(KGATE_TOOLS_ONLY)
  return()  # Google Benchmark drives the suites' timing, which a tools-only build leaves out
endif()
set(BENCHMARK_ENABLE_TESTING OFF CACHE INTERNAL "")
set(BENCHMARK_ENABLE_INSTALL ON CACHE INTERNAL "")
set(BENCHMARK_ENABLE_GTEST_TESTS OFF CACHE INTERNAL "")
kgate_require(benchmark TARGET benchmark::benchmark APT libbenchmark-dev
  URL https://github.com/google/benchmark/archive/refs/tags/v1.8.3.tar.gz
  SHA256 6bc180a57d23d4d9515519f92b0c83d61b05b5bab188961f36ac7b06b0d9e9ce)
