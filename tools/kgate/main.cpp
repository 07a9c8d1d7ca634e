// kgate: compare benchmark runs, keep baselines, merge shards (tools/kgate/cli.hpp).
#include <iostream>

#include "cli.hpp"

int main(int argc, char** argv) { return kgate::kgate_main(argc, argv, std::cout, std::cerr); }
