#pragma once
// How an input file is named in anything kgate writes for others to read (a pull-request comment,
// a report): relative to the working directory when it lies under it, else by its file name, so no
// output shows the layout of the machine that wrote it.
#include <string>

namespace kgate {

std::string display_path(const std::string& path);

}  // namespace kgate
