# `cmake --install build --prefix P`: the kgate tool, the harness's libraries and headers, and the
# CMake package (find_package(kgate CONFIG) with P on CMAKE_PREFIX_PATH) with its targets
# kgate::harness, kgate::bench_main, kgate::correctness_main, kgate::kgate (the tool), each module
# as kgate::<module>, and kgate_add_suite (cmake/KgateSuite.cmake). A tools-only build installs
# the tool and the CUDA-free modules. A dependency that kgate_require built from source (downloaded,
# or FETCHCONTENT_SOURCE_DIR_<PACKAGE>) is installed into the same prefix by its own install rules,
# where kgateConfig.cmake's find_dependency finds it.
include(CMakePackageConfigHelpers)

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
              ${PROJECT_SOURCE_DIR}/cmake/KgateCudaStandard.cmake
        DESTINATION ${kgate_config_dir})
install(FILES ${PROJECT_SOURCE_DIR}/LICENSE ${PROJECT_SOURCE_DIR}/README.md ${PROJECT_SOURCE_DIR}/CHANGELOG.md
        DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs
        FILES_MATCHING PATTERN "*.md" PATTERN "*.json" PATTERN "example-*" EXCLUDE)
