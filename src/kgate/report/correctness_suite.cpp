// The GPU correctness suite as it ran: ctest's JUnit (ctest --output-junit), read back. ctest
// writes one <testcase> per test with status "run", "fail" or "notrun"/"disabled", the test's
// output in <system-out>; a GoogleTest skip is a test that ran, its reason after "Skipped".
#include "kgate/report/report.hpp"

#include <fstream>
#include <regex>
#include <sstream>

#include "kgate/results/results_io.hpp"

namespace kgate {
namespace {

std::string attribute(const std::string& tag, const std::string& name) {
  const std::regex pattern("\\s" + name + "=\"([^\"]*)\"");
  std::smatch match;
  return std::regex_search(tag, match, pattern) ? match[1].str() : "";
}

std::string unescape(std::string text) {
  for (const auto& [entity, plain] : {std::pair<const char*, const char*>{"&lt;", "<"},
                                      {"&gt;", ">"},
                                      {"&quot;", "\""},
                                      {"&apos;", "'"},
                                      {"&#10;", "\n"},
                                      {"&amp;", "&"}})
    for (std::size_t at = text.find(entity); at != std::string::npos; at = text.find(entity, at + 1))
      text.replace(at, std::string_view(entity).size(), plain);
  return text;
}

// GoogleTest prints a skip as "<file>:<line>: Skipped\n<message>\n"; the first message line is
// the reason.
std::string skip_reason(const std::string& output) {
  const std::size_t at = output.find(": Skipped\n");
  if (at == std::string::npos) return "";
  const std::size_t start = at + 10, end = output.find('\n', start);
  return output.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

}  // namespace

std::vector<SuiteCase> read_ctest_junit(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ResultsError(path + ": cannot open the correctness suite's JUnit file");
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();
  if (text.find("<testsuite") == std::string::npos)
    throw ResultsError(path + ": not JUnit XML (no <testsuite>; write it with ctest --output-junit FILE)");
  std::vector<SuiteCase> cases;
  static const std::regex testcase(R"(<testcase\b([^>]*?)(/>|>([\s\S]*?)</testcase>))");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), testcase); it != std::sregex_iterator(); ++it) {
    const std::string tag = (*it)[1].str(), body = (*it)[3].str();
    SuiteCase c;
    const std::string name = unescape(attribute(tag, "name"));
    // The correctness suite names its cases <family>/<variant>.<shape test id>.
    if (const std::size_t dot = name.find('.'); dot != std::string::npos && name.substr(0, dot).find('/') != std::string::npos) {
      c.variant = name.substr(0, dot);
      c.shape = name.substr(dot + 1);
    } else {
      c.variant = name;
    }
    const std::string status = attribute(tag, "status");
    std::smatch output;
    const std::string out =
        std::regex_search(body, output, std::regex(R"(<system-out>([\s\S]*?)</system-out>)")) ? unescape(output[1].str()) : "";
    const std::string reason = skip_reason(out);
    if (status == "fail" || body.find("<failure") != std::string::npos) {
      c.result = SuiteCase::Result::failed;
    } else if (status == "run" && reason.empty()) {
      c.result = SuiteCase::Result::passed;
    } else {
      c.result = SuiteCase::Result::skipped;
      std::smatch skipped;
      c.reason = !reason.empty() ? reason
                 : std::regex_search(body, skipped, std::regex(R"re(<skipped\b[^>]*message="([^"]*)")re"))
                     ? "not run: " + unescape(skipped[1].str())
                     : "not run (" + (status.empty() ? std::string("no status") : status) + ")";
    }
    cases.push_back(std::move(c));
  }
  if (cases.empty()) throw ResultsError(path + ": no <testcase> in the JUnit file");
  return cases;
}

}  // namespace kgate
