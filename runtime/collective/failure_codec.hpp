// An error as the members of a collective resolution send it to each other:
// a status byte (kObject for no error, else 1 + its ErrorKind) and bytes, so
// that every kind of kiln::Error arrives as the same class on every member
// (kiln/errors.hpp's one taxonomy).
#pragma once

#include <exception>
#include <string>
#include <vector>

namespace kiln::runtime {

inline constexpr char kObject = 0;  // the bytes are an object (or nothing), not an error

struct Unpacked {
  char status = kObject;
  std::vector<char> bytes;
};

// `e` as a status and bytes: for a CompileError the kernel's name (`kernel`),
// a NUL and the diagnostics; for any other error its message. An exception
// that is not a kiln::Error travels as a plain Error with its message.
Unpacked failure_of(const std::exception& e, const std::string& kernel);

// Throws what failure_of encoded, as the same class; `prefix` (where it
// happened) goes before the message of every class but CompileError, whose
// message the constructor composes from the kernel and the diagnostics.
[[noreturn]] void rethrow(const Unpacked& failure, const std::string& prefix = "");

}  // namespace kiln::runtime
