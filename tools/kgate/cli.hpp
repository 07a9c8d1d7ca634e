#pragma once
// The `kgate` command line as a function, so tests run it in-process with their own streams.
#include <ostream>

namespace kgate {

// Exit status: 0 success (no regression), 1 a regression or failed variant (compare) or a refused
// baseline update, 2 bad input or usage. Never throws.
int kgate_main(int argc, char** argv, std::ostream& out, std::ostream& err);

}  // namespace kgate
