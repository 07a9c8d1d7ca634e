#pragma once
// The options `kgate compare` and `kgate ab` share: how the comparator judges (thresholds,
// significance, noise) and which report files it writes. Defined in compare_command.cpp.
#include <set>
#include <string>

#include "args.hpp"
#include "commands.hpp"
#include "kgate/gate/compare.hpp"

namespace kgate::cli {

// Names of the options that take a value, for OptionSpec::with_value.
const std::set<std::string>& comparator_value_options();

// Names of the comparator's flags (--allow-timer-mismatch, --all, --ascii), for OptionSpec::flags.
const std::set<std::string>& comparator_flags();

// The usage lines of those options, for a command's --help.
const char* comparator_options_usage();

// The comparator's settings from the command line: --thresholds FILE, else `default_thresholds`
// when that file exists; --threshold, --min-change-us, --alpha, --noise-limit,
// --allow-timer-mismatch. Checks first that the report files (--json, --junit, --markdown) can
// be written and that --link-base is an absolute URL, so that call it before any work.
CompareOptions comparator_options(const Args& args, const std::string& default_thresholds);

// Writes --json, --junit and --markdown (its links under --link-base), each when asked for.
void write_comparison_files(const Args& args, const ComparisonReport& report);

// Prints the warnings to io.err and the table to io.out (--all; --ascii or KGATE_ASCII for ASCII glyphs).
void print_comparison(const Args& args, const ComparisonReport& report, Io& io);

}  // namespace kgate::cli
