#include "kgate/results/json_file.hpp"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <memory>
#include <new>
#include <string_view>
#include <vector>

#include "kgate/results/results_io.hpp"

namespace kgate {

using nlohmann::json;

namespace {

// A limit from the environment: `fallback` when the variable is unset or empty.
std::uint64_t limit_from_environment(const char* variable, std::uint64_t fallback, std::uint64_t most) {
  const char* text = std::getenv(variable);
  if (!text || !*text) return fallback;
  const std::string_view value(text);
  std::uint64_t parsed = 0;
  const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), parsed);
  if (error != std::errc() || end != value.data() + value.size() || parsed < 1 || parsed > most)
    throw ResultsError(std::string(variable) + ": expected a whole number from 1 to " + std::to_string(most) + ", got '" +
                       std::string(value.substr(0, 40)) + "'");
  return parsed;
}

// Byte offsets where a substitution changed the text's length, to map a parser position back.
struct Substitution {
  std::size_t position;  // in the rewritten text, just after the replacement
  long long shift;       // rewritten length minus original length, accumulated so far
};

// Google Benchmark writes non-finite doubles as bare NaN, -NaN, Infinity, -Infinity: not JSON.
std::string replace_non_finite_literals(const std::string& text, std::vector<Substitution>& substitutions) {
  static const std::string_view kLiterals[] = {"-Infinity", "Infinity", "-NaN", "NaN"};
  std::string out;
  out.reserve(text.size());
  long long shift = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (in_string) {
      out += c;
      if (c == '\\' && i + 1 < text.size()) out += text[++i];
      else if (c == '"') in_string = false;
      ++i;
      continue;
    }
    if (c == '"') in_string = true;
    bool replaced = false;
    for (std::string_view literal : kLiterals) {
      if (std::string_view(text).substr(i, literal.size()) == literal) {
        out += "null";
        shift += 4 - static_cast<long long>(literal.size());
        substitutions.push_back({out.size(), shift});
        i += literal.size();
        replaced = true;
        break;
      }
    }
    if (!replaced) out += text[i++];
  }
  return out;
}

std::size_t original_offset(std::size_t offset, const std::vector<Substitution>& substitutions) {
  long long shift = 0;
  for (const Substitution& s : substitutions)
    if (s.position <= offset) shift = s.shift;
  return static_cast<std::size_t>(static_cast<long long>(offset) - shift);
}

// Thrown from the parser's callback at the first array or object beyond the depth limit.
struct TooDeep {};

json parse_json_text(const std::string& text, const std::string& source, int max_depth) {
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) throw ResultsError(source + ": file is empty");
  std::vector<Substitution> substitutions;
  const std::string rewritten = replace_non_finite_literals(text, substitutions);
  // The callback sees how many arrays and objects are open when another one starts: refused there,
  // the document never holds a value too deep for the recursive code that reads and prints it.
  const json::parser_callback_t depth_check = [max_depth](int depth, json::parse_event_t event, json&) {
    if (depth >= max_depth && (event == json::parse_event_t::object_start || event == json::parse_event_t::array_start)) throw TooDeep{};
    return true;
  };
  try {
    return json::parse(rewritten, depth_check);
  } catch (const TooDeep&) {
    throw ResultsError(source + ": arrays and objects nested more than " + std::to_string(max_depth) +
                       " deep, beyond the limit (KGATE_MAX_JSON_DEPTH raises it)");
  } catch (const json::parse_error& e) {
    // nlohmann's position is in the rewritten text: the location is worked out again in the file's.
    std::string detail = e.what();
    if (const auto column = detail.find(", column "); column != std::string::npos) detail = detail.substr(detail.find(": ", column) + 2);
    const std::size_t byte = std::min(original_offset(e.byte, substitutions), text.size() + 1);  // 1-based
    const std::size_t line_start = byte >= 2 ? text.rfind('\n', byte - 2) : std::string::npos;
    const std::size_t line =
        1 + static_cast<std::size_t>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(byte - 1), '\n'));
    const std::size_t column = line_start == std::string::npos ? byte : byte - line_start - 1;
    const char* kind = e.byte > rewritten.size() ? "truncated JSON" : "malformed JSON";
    throw ResultsError(source + ": " + kind + " at line " + std::to_string(line) + ", column " + std::to_string(column) + " (byte " +
                       std::to_string(byte) + "): " + detail);
  } catch (const json::out_of_range& e) {
    // A number beyond a double's range (1e999): nlohmann names the number, not where it is.
    const std::string detail = e.what();
    throw ResultsError(source + ": malformed JSON: " + detail.substr(detail.find(']') + 2));
  }
}

// The file's bytes, inflated when gzipped, up to `max_bytes`: zlib's gz reader passes a file that
// is not gzip through unchanged, so one reader serves both. A pipe or a device is read the same
// way, and stopped at the limit.
std::string read_bounded(const std::string& path, std::uint64_t max_bytes) {
  const std::unique_ptr<gzFile_s, int (*)(gzFile)> in(gzopen(path.c_str(), "rb"), gzclose);
  if (!in) throw ResultsError(path + ": cannot open: " + std::strerror(errno));
  gzbuffer(in.get(), 1 << 20);
  std::string text;
  std::vector<char> chunk(1 << 20);
  for (int got; (got = gzread(in.get(), chunk.data(), static_cast<unsigned>(chunk.size()))) != 0;) {
    if (got < 0) {
      int code = 0;
      const char* message = gzerror(in.get(), &code);
      throw ResultsError(path + ": cannot read: " + (code == Z_ERRNO ? std::strerror(errno) : std::string(message)));
    }
    if (text.size() + static_cast<std::size_t>(got) > max_bytes)
      throw ResultsError(path + (gzdirect(in.get()) ? ": larger than " : ": inflates to more than ") + std::to_string(max_bytes) +
                         " bytes, the limit of one input file (KGATE_MAX_INPUT_BYTES raises it)");
    text.append(chunk.data(), static_cast<std::size_t>(got));
  }
  return text;
}

// Appends `value` as JSON to `out` until `out` holds `limit` characters. Every array or object
// adds a character before its items, so the recursion is never deeper than `limit`, whatever the
// value's depth.
void append_excerpt(const json& value, std::string& out, std::size_t limit) {
  constexpr auto kReplace = json::error_handler_t::replace;  // a cut may split a UTF-8 sequence
  if (out.size() >= limit) return;
  if (value.is_string()) {
    out += json(value.get_ref<const std::string&>().substr(0, limit - out.size())).dump(-1, ' ', false, kReplace);
  } else if (value.is_array() || value.is_object()) {
    out += value.is_array() ? '[' : '{';
    bool first = true;
    for (auto it = value.begin(); it != value.end() && out.size() < limit; ++it, first = false) {
      if (!first) out += ", ";
      if (value.is_object()) out += json(it.key().substr(0, limit)).dump(-1, ' ', false, kReplace) + ": ";
      append_excerpt(*it, out, limit);
    }
    out += value.is_array() ? ']' : '}';
  } else {
    out += value.dump();  // a number, true, false or null: short
  }
}

}  // namespace

std::string json_excerpt(const json& value) {
  std::string text;
  append_excerpt(value, text, kExcerptChars);
  if (text.size() <= kExcerptChars) return text;
  std::size_t cut = kExcerptChars - 3;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;  // inside a UTF-8 sequence
  return text.substr(0, cut) + "...";
}

InputLimits input_limits() {
  return {limit_from_environment("KGATE_MAX_INPUT_BYTES", kDefaultInputLimits.max_bytes, std::numeric_limits<std::int64_t>::max()),
          static_cast<int>(limit_from_environment("KGATE_MAX_JSON_DEPTH", static_cast<std::uint64_t>(kDefaultInputLimits.max_depth),
                                                  // deeper than this, printing or copying a value could overflow the stack
                                                  1000))};
}

json read_json_file(const std::string& path) {
  const InputLimits limits = input_limits();
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw ResultsError(path + ": is a directory, not a file");
  try {
    return parse_json_text(read_bounded(path, limits.max_bytes), path, limits.max_depth);
  } catch (const std::bad_alloc&) {
    // Within the byte limit, a document of millions of tiny values can still outgrow this machine.
    throw ResultsError(path + ": not enough memory to hold its JSON (KGATE_MAX_INPUT_BYTES lowers the limit of what is read)");
  }
}

}  // namespace kgate
