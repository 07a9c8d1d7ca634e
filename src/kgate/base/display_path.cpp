#include "kgate/base/display_path.hpp"

#include <filesystem>
#include <system_error>

namespace kgate {

std::string display_path(const std::string& path) {
  namespace fs = std::filesystem;
  if (path.empty() || path == "-") return path;
  std::error_code error;
  const fs::path given(path);
  const fs::path absolute = fs::absolute(given, error).lexically_normal();
  const fs::path here = fs::current_path(error);
  if (!error && !here.empty()) {
    const fs::path relative = absolute.lexically_relative(here);
    if (!relative.empty() && *relative.begin() != "..") return relative.generic_string();
  }
  // Outside the working directory (or a relative path that climbs out of it): the name alone.
  return given.filename().empty() ? given.generic_string() : given.filename().generic_string();
}

}  // namespace kgate
