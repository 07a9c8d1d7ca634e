#pragma once
// What a test expects a refusal to say: the message of the exception of type Error that `call()`
// throws, or "" when it throws none (another type passes through and fails the test).
#include <string>

namespace kgate::testing_support {

template <typename Error, typename Call>
std::string message_thrown(Call call) {
  try {
    call();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace kgate::testing_support
