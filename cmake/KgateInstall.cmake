# `cmake --install build --prefix P`: the kgate tool, the harness's libraries and headers, and the
# CMake package (find_package(kgate CONFIG) with P on CMAKE_PREFIX_PATH) with its targets
# kgate::harness, kgate::bench_main, kgate::correctness_main, kgate::kgate (the tool), each module
# as kgate::<module>, and kgate_add_suite (cmake/KgateSuite.cmake). A tools-only build installs
# the tool and the CUDA-free modules.
include(CMakePackageConfigHelpers)

# An exported target can only name dependencies that the consumer finds with find_package too;
# one that FetchContent built into this tree (KGATE_FETCH_MISSING) cannot be exported.
set(kgate_install_dependencies nlohmann_json::nlohmann_json)
if(NOT KGATE_TOOLS_ONLY)
  list(APPEND kgate_install_dependencies GTest::gtest benchmark::benchmark)
endif()
foreach(dependency IN LISTS kgate_install_dependencies)
  get_target_property(aliased ${dependency} ALIASED_TARGET)
  get_target_property(imported ${dependency} IMPORTED)
  if(aliased OR NOT imported)
    message(STATUS "kgate: no install rules: ${dependency} was downloaded into the build tree, not found installed "
                   "(install it, e.g. scripts/bootstrap.sh, to make kgate installable)")
    return()
  endif()
endforeach()

set(kgate_config_dir ${CMAKE_INSTALL_LIBDIR}/cmake/kgate)
get_property(kgate_libraries GLOBAL PROPERTY KGATE_MODULE_TARGETS)
install(TARGETS ${kgate_libraries} kgate EXPORT kgateTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/kgate DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT kgateTargets NAMESPACE kgate:: DESTINATION ${kgate_config_dir})

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/kgateConfig.cmake.in
  ${PROJECT_BINARY_DIR}/kgateConfig.cmake INSTALL_DESTINATION ${kgate_config_dir})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/kgateConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/kgateConfig.cmake ${PROJECT_BINARY_DIR}/kgateConfigVersion.cmake
              ${PROJECT_SOURCE_DIR}/cmake/KgateSuite.cmake ${PROJECT_SOURCE_DIR}/cmake/KgateSQLite3.cmake
        DESTINATION ${kgate_config_dir})
