// What a kernel declares: its name, arguments, sizes, temporaries and
// specialisation parameters, as the `#pragma kiln` lines of its source give
// them (lang/parser.hpp reads them). See docs/manual/kernel-language.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/arg.hpp"

namespace kiln::lang {

// One dimension of an array as its declaration gives it
// (`theta_v[cells][levels + 1]`, `c2e[cells][3]`, `in[nz][ny][nx]`): a
// constant, or a named size or an integer parameter plus a constant offset.
struct Extent {
  enum class Of { constant, size, param };
  Of of = Of::constant;
  std::size_t index = 0;    // into KernelInfo::sizes (size) or KernelInfo::params (param)
  std::int64_t offset = 0;  // the constant itself, or what is added to the size or parameter
};

// An argument of a call: an array (rank >= 1) or a scalar (rank 0).
struct ArgDecl {
  std::string name;
  ElementType type = ElementType::f64;
  int rank = 0;
  std::vector<Extent> extents;  // one per dimension; empty in a kernel that declares none (unchecked)
  // A connectivity table (`... indexes cells or -1`): its entries index this
  // size (into KernelInfo::sizes); -1 marks a missing neighbour where allowed.
  std::optional<std::size_t> indexes;
  bool missing_allowed = false;
};

// A named size (`#pragma kiln size cells contains horizontal_start horizontal_end`):
// every array dimension declared with it has it as its extent, and the domain
// range [start, end) it contains lies within it. Checked at every call.
struct SizeDecl {
  std::string name;
  std::optional<std::size_t> start, end;  // into KernelInfo::params: the range it contains
};

// Memory a kernel needs during a call and the caller never sees
// (`#pragma kiln temporary double z[2] like w`): laid out as the array `like`
// (its shape and strides, its blocks), so its view type is that array's.
// kiln passes it after the call's arguments (runtime/call/temporaries.hpp).
struct TemporaryDecl {
  std::string name;
  ElementType type = ElementType::f64;
  int rank = 0;
  std::size_t like = 0;  // index into KernelInfo::args: an array of the same rank
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
  bool user = false;      // added by the user (Registry::add), not embedded in libkiln
  std::string path;       // a user kernel's file, absolute; empty when added as text
  std::string body;       // the text with `#pragma kiln` lines blanked (line numbers kept)
  std::vector<ArgDecl> args;
  std::vector<TemporaryDecl> temporaries;  // after args at the entry: args[args.size() + t]
  std::vector<ParamDecl> params;
  std::vector<SizeDecl> sizes;
  // Its body shares a call's work among threads: it calls the prelude's
  // phase helpers and writes no array element outside them
  // (lang/splitting.hpp). Otherwise a call runs on one thread whatever the
  // thread count, and single_thread_why says why ("line 12 writes ...").
  bool splits = true;
  std::string single_thread_why;

  // Its arrays declare their extents: every call is checked against them.
  bool checked() const;
  const ArgDecl* find_arg(std::string_view name) const;
  const ParamDecl* find_param(std::string_view name) const;
};

}  // namespace kiln::lang
