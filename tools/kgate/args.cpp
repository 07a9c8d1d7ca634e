#include "args.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <string_view>

#include "kgate/base/escape.hpp"
#include "kgate/base/text.hpp"

namespace kgate::cli {

Args::Args(const std::vector<std::string>& arguments, const OptionSpec& spec) {
  bool options_ended = false;
  for (std::size_t i = 0; i < arguments.size(); ++i) {
    const std::string& arg = arguments[i];
    if (options_ended || arg == "-" || !arg.starts_with("-")) {
      positionals_.push_back(arg);
      if (options_ended) ++separated_;
      continue;
    }
    if (arg == "--") {
      options_ended = true;
      continue;
    }
    const auto equals = arg.find('=');
    std::string name = arg.substr(0, equals);
    if (const auto alias = spec.aliases.find(name); alias != spec.aliases.end()) name = alias->second;
    if (name == "-h" || name == "--help") name = "--help";
    if (name == "--help" || spec.flags.contains(name)) {
      if (equals != std::string::npos) throw UsageError(name + " takes no value");
      flags_.insert(name);
    } else if (spec.with_value.contains(name)) {
      if (equals != std::string::npos) {
        values_[name] = arg.substr(equals + 1);
      } else {
        if (i + 1 >= arguments.size()) throw UsageError(name + " needs a value");
        values_[name] = arguments[++i];
      }
      if (values_[name].empty()) throw UsageError(name + " needs a non-empty value");
    } else {
      throw UsageError("unknown option " + name);
    }
  }
}

std::vector<std::string> Args::after_separator(const std::string& what) const {
  if (positionals_.size() != separated_) throw UsageError("unexpected argument '" + positionals_.front() + "' (" + what + " go after --)");
  return {positionals_.end() - static_cast<std::ptrdiff_t>(separated_), positionals_.end()};
}

std::optional<std::string> Args::value(const std::string& name) const {
  const auto it = values_.find(name);
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

double Args::number(const std::string& name, double fallback, double low, double high) const {
  const auto text = value(name);
  if (!text) return fallback;
  char* end = nullptr;
  const double parsed = std::strtod(text->c_str(), &end);
  if (end == text->c_str() || *end != '\0' || !std::isfinite(parsed) || parsed < low || parsed > high)
    throw UsageError(name + ": expected a number in [" + printf_string("%g", low) + ", " + printf_string("%g", high) + "], got '" + *text +
                     "'");
  return parsed;
}

std::optional<Args> parse_or_help(const std::vector<std::string>& arguments, const OptionSpec& spec, std::string_view usage,
                                  std::ostream& out) {
  Args args(arguments, spec);
  if (!args.help()) return args;
  out << usage;
  return std::nullopt;
}

std::optional<ActionArgs> parse_action(const std::vector<std::string>& arguments,
                                       const std::vector<std::pair<std::string, OptionSpec>>& actions, std::string_view usage,
                                       std::ostream& out) {
  const std::string action = arguments.empty() ? "" : arguments.front();
  if (action == "-h" || action == "--help") {
    out << usage;
    return std::nullopt;
  }
  const auto spec = std::find_if(actions.begin(), actions.end(), [&](const auto& named) { return named.first == action; });
  if (spec == actions.end()) {
    std::string names;
    for (auto it = actions.begin(); it != actions.end(); ++it)
      names += (it == actions.begin() ? "" : std::next(it) == actions.end() ? " or " : ", ") + it->first;
    throw UsageError(action.empty() ? "expected an action: " + names : "unknown action '" + action + "' (expected " + names + ")");
  }
  auto args = parse_or_help({arguments.begin() + 1, arguments.end()}, spec->second, usage, out);
  if (!args) return std::nullopt;
  return ActionArgs{action, std::move(*args)};
}

std::string command_line(std::string_view command, const std::vector<std::string>& arguments) {
  std::string text(command);
  for (const std::string& a : arguments) text += " " + (a.find_first_of(" \t'\"$") == std::string::npos ? a : "'" + a + "'");
  return text;
}

void require_writable(const std::string& option, const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code error;
  const fs::path file(path);
  if (fs::is_directory(file, error)) throw UsageError(option + " " + path + ": is a directory, expected a file");
  if (fs::exists(file, error)) {
    if (access(path.c_str(), W_OK) != 0) throw UsageError(option + " " + path + ": not writable");
    return;
  }
  const fs::path dir = file.parent_path().empty() ? fs::path(".") : file.parent_path();
  if (!fs::is_directory(dir, error)) throw UsageError(option + " " + path + ": directory " + dir.string() + " does not exist");
  if (access(dir.c_str(), W_OK) != 0) throw UsageError(option + " " + path + ": directory " + dir.string() + " is not writable");
}

void require_writable_directory(const std::string& option, const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code error;
  fs::path existing = fs::absolute(path, error);
  while (!fs::exists(existing, error) && existing.has_relative_path()) existing = existing.parent_path();
  if (!fs::is_directory(existing, error)) throw UsageError(option + " " + path + ": " + existing.string() + " is not a directory");
  if (access(existing.c_str(), W_OK) != 0) throw UsageError(option + " " + path + ": " + existing.string() + " is not writable");
}

void require_absolute_url(const std::string& option, const std::string& url) {
  const bool scheme = url.starts_with("https://") || url.starts_with("http://");
  // Characters that would end a Markdown link's destination or an HTML attribute, or break a line.
  const auto unsafe = std::find_if(url.begin(), url.end(), [](char c) {
    return static_cast<unsigned char>(c) <= ' ' || c == 0x7f || std::string_view("()<>\"'`\\").find(c) != std::string_view::npos;
  });
  if (!scheme || url.size() <= std::string_view("https://").size())
    throw UsageError(option + ": expected an absolute http:// or https:// URL, got '" + terminal_text(url) + "'");
  if (unsafe != url.end())
    throw UsageError(option + ": the URL holds '" + terminal_text(std::string(1, *unsafe)) +
                     "', which cannot stand in a link (percent-encode it: spaces as %20)");
}

}  // namespace kgate::cli
