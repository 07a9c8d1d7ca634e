# SQLite::SQLite3 for kgate's history module: CMake's FindSQLite3 where SQLite's development files
# are installed; otherwise the runtime library libsqlite3.so.0 alone, which an offline GPU image has
# (Python's sqlite3 module needs it) when it cannot install libsqlite3-dev. kgate then compiles
# against SQLite's own header, vendored in third_party/sqlite3/ (KGATE_SQLITE3_VENDORED_HEADER).
# Included by kgate's build and by the installed kgateConfig.cmake, whose static history module
# carries the library to its users' links.
if(TARGET SQLite::SQLite3)
  return()
endif()
find_package(SQLite3 QUIET)
if(SQLite3_FOUND)
  return()
endif()
find_library(KGATE_SQLITE3_RUNTIME NAMES libsqlite3.so.0 sqlite3)
if(NOT KGATE_SQLITE3_RUNTIME)
  message(FATAL_ERROR "kgate: SQLite 3 not found: neither its development files nor libsqlite3.so.0. "
                      "Install libsqlite3-dev (scripts/bootstrap.sh does), or point CMAKE_PREFIX_PATH at an SQLite install.")
endif()
message(STATUS "kgate: SQLite's development files are missing; using ${KGATE_SQLITE3_RUNTIME} with the vendored header")
add_library(SQLite::SQLite3 UNKNOWN IMPORTED)
set_target_properties(SQLite::SQLite3 PROPERTIES IMPORTED_LOCATION "${KGATE_SQLITE3_RUNTIME}")
set(KGATE_SQLITE3_VENDORED_HEADER TRUE)
