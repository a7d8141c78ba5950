#include "runtime/collective/failure_codec.hpp"

#include "kiln/errors.hpp"

namespace kiln::runtime {
namespace {

std::vector<char> bytes_of(const std::string& text) { return {text.begin(), text.end()}; }

}  // namespace

Unpacked failure_of(const std::exception& e, const std::string& kernel) {
  if (const auto* compile = dynamic_cast<const CompileError*>(&e)) {
    std::vector<char> bytes = bytes_of(kernel);
    bytes.push_back('\0');
    bytes.insert(bytes.end(), compile->diagnostics().begin(), compile->diagnostics().end());
    return {static_cast<char>(1 + static_cast<int>(ErrorKind::compile)), std::move(bytes)};
  }
  const auto* error = dynamic_cast<const Error*>(&e);
  const ErrorKind kind = error ? error->kind() : ErrorKind::error;
  return {static_cast<char>(1 + static_cast<int>(kind)), bytes_of(e.what())};
}

void rethrow(const Unpacked& failure, const std::string& prefix) {
  const std::string text(failure.bytes.begin(), failure.bytes.end());
  const int code = failure.status - 1;
  // A code this kiln does not know (a member of another version): the base class.
  const ErrorKind kind = code >= 0 && code < kErrorKinds ? static_cast<ErrorKind>(code) : ErrorKind::error;
  if (kind == ErrorKind::compile) {
    const std::size_t nul = text.find('\0');
    throw_error(kind, text.substr(0, nul), nul == std::string::npos ? std::string() : text.substr(nul + 1));
  }
  throw_error(kind, prefix + text);
}

}  // namespace kiln::runtime
