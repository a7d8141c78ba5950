// The kernel source format: C++ statements (the body) with `#pragma kiln`
// lines that declare the kernel's name, its arguments and its specialisation
// parameters. See the README, "Kernel sources".
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "kiln/arg.hpp"

namespace kiln::runtime {

// An argument of a call: an array (rank >= 1) or a scalar (rank 0).
struct ArgDecl {
  std::string name;
  ElementType type = ElementType::f64;
  int rank = 0;
};

enum class ParamKind { domain, static_value };

// A specialisation parameter. Domain parameters are integers (index_t).
// Static parameters are bool, int (i64) or double.
struct ParamDecl {
  std::string name;
  ParamKind kind = ParamKind::domain;
  ElementType type = ElementType::i64;
};

struct KernelInfo {
  std::string name;
  std::string file_name;  // what diagnostics call the source
  std::string source;     // the text as given
  std::string source_digest;  // text_digest(source), set by the registry: what cache keys take
  std::string body;       // the text with `#pragma kiln` lines blanked (line numbers kept)
  std::vector<ArgDecl> args;
  std::vector<ParamDecl> params;

  const ArgDecl* find_arg(std::string_view name) const;
  const ParamDecl* find_param(std::string_view name) const;
};

// Throws KernelSourceError "<file>:<line>: <what>" on a malformed declaration,
// a duplicate name, or a missing `#pragma kiln kernel`.
KernelInfo parse_kernel_source(std::string_view source, std::string_view file_name);

}  // namespace kiln::runtime
