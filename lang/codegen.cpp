#include "lang/codegen.hpp"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <vector>

#include "lang/splitting.hpp"

namespace kiln::lang {
namespace {

std::string cpp_type(ElementType type) {
  switch (type) {
    case ElementType::f64: return "double";
    case ElementType::f32: return "float";
    case ElementType::i32: return "int32_t";
    case ElementType::i64: return "int64_t";
    case ElementType::boolean: return "bool";
  }
  return "void";
}

// Exact: a hexadecimal literal carries every bit of the double.
std::string double_literal(double value) {
  if (std::isnan(value)) return "__builtin_nan(\"\")";
  if (std::isinf(value)) return value > 0 ? "__builtin_inf()" : "(-__builtin_inf())";
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "(%a)", value);
  return buffer;
}

std::string param_declaration(const ParamDecl& param, std::size_t index, const kiln_value& value, bool specialised) {
  const std::string type = param.kind == ParamKind::domain ? "kiln::index_t" : cpp_type(param.type);
  if (!specialised) {
    const std::string slot = "kiln_params[" + std::to_string(index) + "]";
    const std::string read = param.type == ElementType::f64 ? slot + ".f64" : slot + ".i64";
    return "  [[maybe_unused]] const " + type + " " + param.name + " = static_cast<" + type + ">(" + read + ");\n";
  }
  std::string literal;
  if (param.type == ElementType::f64) literal = double_literal(value.f64);
  else if (param.type == ElementType::boolean) literal = value.i64 ? "true" : "false";
  else literal = "static_cast<" + type + ">(" + std::to_string(value.i64) + "LL)";
  return "  [[maybe_unused]] constexpr " + type + " " + param.name + " = " + literal + ";\n";
}

// Fixed strides become template constants. A blocked view lists nproma
// first, then the strides of the declared dimensions, up to four of them with
// the missing ones dynamic, then the block stride, then the block count when fixed.
std::string view_type(const ArgDecl& arg, const std::optional<Spec::Strides>& strides, std::int64_t nproma,
                      std::int64_t nblks) {
  const std::string dynamic = "kiln::dynamic";
  if (nproma == kFlat) {
    std::string type = "kiln::View<" + cpp_type(arg.type) + ", " + std::to_string(arg.rank);
    if (strides)
      for (std::int64_t s : *strides) type += ", " + std::to_string(s);
    return type + ">";
  }
  std::string type = "kiln::BlockedView<" + cpp_type(arg.type) + ", " + std::to_string(arg.rank) + ", " +
                     (nproma > 0 ? std::to_string(nproma) : dynamic);
  for (int d = 0; d < 4; ++d)
    type += ", " + (strides && d < arg.rank ? std::to_string((*strides)[static_cast<std::size_t>(d)]) : dynamic);
  type += ", " + (strides ? std::to_string(strides->back()) : dynamic);
  if (nblks > 0) type += ", " + std::to_string(nblks);
  return type + ">";
}

// How a view is made: from its argument, or in check mode (KILN_CHECK) with
// the report it writes a violation to and its index among the arguments.
std::string view_arguments(const std::string& slot, std::size_t index, bool check) {
  return check ? "(" + slot + ", kiln_report, " + std::to_string(index) + ")" : "(" + slot + ")";
}

// A table in check mode is declared after the extent checks (table_declarations):
// its reads are checked against the size it indexes (kiln_end_<size>), known only then.
bool checked_table(const ArgDecl& arg, bool check) { return check && arg.indexes.has_value(); }

// check_strides: the CPU entry refuses a call with other strides than the
// specialised ones; a GPU entry cannot, its launcher checks them.
std::string arg_declarations(const KernelInfo& kernel, const BoundSpec& bound, bool check_strides, bool check) {
  std::string out;
  for (std::size_t i = 0; i < kernel.args.size(); ++i) {
    const ArgDecl& arg = kernel.args[i];
    const std::string slot = "(*kiln_args[" + std::to_string(i) + "])";
    if (arg.rank == 0) {
      const std::string field = arg.type == ElementType::f64 || arg.type == ElementType::f32 ? ".scalar.f64" : ".scalar.i64";
      out += "  [[maybe_unused]] const " + cpp_type(arg.type) + " " + arg.name + " = static_cast<" +
             cpp_type(arg.type) + ">(" + slot + field + ");\n";
      continue;
    }
    const std::string type = view_type(arg, bound.strides[i], bound.nproma[i], bound.nblks[i]);
    if (!checked_table(arg, check)) out += "  const " + type + " " + arg.name + view_arguments(slot, i, check) + ";\n";
    if ((bound.strides[i] || bound.nproma[i] > 0) && check_strides)
      out += "  if (!" + type + "::matches(" + slot + ")) return " + std::to_string(i + 1) + ";\n";
  }
  return out;
}

// Temporaries follow the arguments, each laid out as its `like` array by
// kiln itself: its view type is that array's, and needs no check. Wrapped as
// a kiln::Temporary, which helpers walk only where it holds data (the
// prelude's 22_temporaries.hpp), so no table content makes a kernel write
// past kiln's memory. On the CPU, declared after the extent checks: the rows
// it holds are then its array's declared size (kiln_end_<size>), not the
// padding of a blocked array's last block, which a kernel must not compute
// either (it would read its tables past their rows).
std::string temporary_declarations(const KernelInfo& kernel, const BoundSpec& bound, bool cpu, bool check) {
  std::string out;
  for (std::size_t t = 0; t < kernel.temporaries.size(); ++t) {
    const TemporaryDecl& temp = kernel.temporaries[t];
    ArgDecl as_arg;
    as_arg.name = temp.name;
    as_arg.type = temp.type;
    as_arg.rank = temp.rank;
    const std::string type = "kiln::Temporary<" +
                             view_type(as_arg, bound.strides[temp.like], bound.nproma[temp.like], bound.nblks[temp.like]) +
                             ">";
    const std::size_t index = kernel.args.size() + t;
    std::string arguments = view_arguments("*kiln_args[" + std::to_string(index) + "]", index, check);
    const std::vector<Extent>& like = kernel.args[temp.like].extents;
    if (cpu && !like.empty() && like[0].of == Extent::Of::size) {
      arguments.pop_back();  // the closing parenthesis
      arguments += ", kiln_end_" + kernel.sizes[like[0].index].name + " + " + std::to_string(like[0].offset) + "LL)";
    }
    out += "  const " + type + " " + temp.name + arguments + ";\n";
  }
  return out;
}

std::string table_declarations(const KernelInfo& kernel, const BoundSpec& bound) {
  std::string out;
  for (std::size_t i = 0; i < kernel.args.size(); ++i) {
    const ArgDecl& arg = kernel.args[i];
    if (!checked_table(arg, true)) continue;
    const std::string type = view_type(arg, bound.strides[i], bound.nproma[i], bound.nblks[i]);
    out += "  const kiln::CheckedTable<" + type + "> " + arg.name + "(*kiln_args[" + std::to_string(i) +
           "], kiln_report, " + std::to_string(i) + ", kiln_end_" + kernel.sizes[*arg.indexes].name + ", " +
           (arg.missing_allowed ? "true" : "false") + ");\n";
  }
  return out;
}

// ---- extent checks: the rules of runtime/call/extents.hpp, inline -------------
// A call the declarations refuse returns kiln_extent_status (-1) before any
// work; the runtime then explains why (runtime/call/extents.cpp, same rules).

std::string shape_of(std::size_t arg, int dim) {
  return "kiln_args[" + std::to_string(arg) + "]->shape[" + std::to_string(dim) + "]";
}

// The value an extent names, as C++ over the entry's parameters.
std::string extent_value(const KernelInfo& kernel, const Extent& e) {
  if (e.of == Extent::Of::constant) return std::to_string(e.offset) + "LL";
  const std::string base =
      e.of == Extent::Of::size ? "kiln_size_" + kernel.sizes[e.index].name : kernel.params[e.index].name;
  return e.offset == 0 ? base : "(" + base + " + " + std::to_string(e.offset) + "LL)";
}

struct Occurrence {
  std::size_t arg;
  int dim;
  const Extent* extent;
};

// A size's value: from a flat dimension that has it (the others must equal
// it), else narrowed by every blocked one to [kiln_lo_, kiln_hi_]. Either
// way kiln_end_<size> is the largest it may be: what its domain range and,
// in check mode, the tables that index it are held to.
std::string size_checks(const KernelInfo& kernel, const BoundSpec& bound, std::size_t s,
                        const std::vector<Occurrence>& uses) {
  const std::string name = kernel.sizes[s].name;
  const auto flat = [&](const Occurrence& o) { return !bound.blocked(o.arg) || o.dim != 0; };
  const auto rank = [&](const Occurrence& o) { return std::to_string(kernel.args[o.arg].rank); };
  std::string out, upper;  // upper: the name of the size's largest value
  const Occurrence* anchor = nullptr;
  for (const Occurrence& o : uses)
    if (flat(o)) {
      anchor = &o;
      break;
    }
  if (anchor) {
    out += "  const kiln::index_t kiln_size_" + name + " = " + shape_of(anchor->arg, anchor->dim) + " - " +
           std::to_string(anchor->extent->offset) + "LL;\n";
    out += "  kiln_bad |= " + shape_of(anchor->arg, anchor->dim) + " < 0;\n";
    upper = "kiln_size_" + name;
  } else {
    out += "  kiln::index_t kiln_lo_" + name + " = -0x7fffffffffffffffLL, kiln_hi_" + name +
           " = 0x7fffffffffffffffLL;\n";
    upper = "kiln_hi_" + name;
  }
  for (const Occurrence& o : uses) {
    if (&o == anchor) continue;
    const std::string value = extent_value(kernel, *o.extent);
    if (!anchor)
      out += "  kiln_bad |= !kiln::narrow_by_blocks(*kiln_args[" + std::to_string(o.arg) + "], " + rank(o) + ", " +
             std::to_string(o.extent->offset) + "LL, kiln_lo_" + name + ", kiln_hi_" + name + ");\n";
    else if (flat(o))
      out += "  kiln_bad |= " + shape_of(o.arg, o.dim) + " != " + value +
             (o.extent->offset < 0 ? " || " + shape_of(o.arg, o.dim) + " < 0" : "") + ";\n";
    else
      out += "  kiln_bad |= !kiln::blocks_hold(*kiln_args[" + std::to_string(o.arg) + "], " + rank(o) + ", " + value +
             ");\n";
  }
  if (!anchor) out += "  kiln_bad |= kiln_lo_" + name + " > kiln_hi_" + name + ";\n";
  out += "  [[maybe_unused]] const kiln::index_t kiln_end_" + name + " = " + upper + ";\n";
  const SizeDecl& size = kernel.sizes[s];
  if (size.start) {
    const std::string& a = kernel.params[*size.start].name;
    const std::string& b = kernel.params[*size.end].name;
    out += "  kiln_bad |= " + a + " < " + b + " && (" + a + " < 0 || " + b + " > kiln_end_" + name + ");\n";
  }
  return out;
}

// A table with rows indexes a size that is not empty: the prelude reads row 0
// of a field in place of a missing neighbour (present_or_zero), so row 0 must exist.
std::string table_target_check(const KernelInfo& kernel, const BoundSpec& bound, std::size_t arg) {
  const ArgDecl& table = kernel.args[arg];
  if (!table.indexes) return "";
  std::string has_rows;
  for (int d = 0; d < passed_rank(table.rank, bound.nproma[arg]); ++d)
    has_rows += " && " + shape_of(arg, d) + " > 0";
  return "  kiln_bad |= kiln_end_" + kernel.sizes[*table.indexes].name + " < 1" + has_rows + ";\n";
}

std::string extent_checks(const KernelInfo& kernel, const BoundSpec& bound) {
  if (!kernel.checked()) return "";
  std::vector<std::vector<Occurrence>> uses(kernel.sizes.size());
  std::string fixed;  // constant and parameter extents
  for (std::size_t i = 0; i < kernel.args.size(); ++i)
    for (std::size_t d = 0; d < kernel.args[i].extents.size(); ++d) {
      const Extent& e = kernel.args[i].extents[d];
      const int dim = static_cast<int>(d);
      if (e.of == Extent::Of::size) {
        uses[e.index].push_back({i, dim, &e});
        continue;
      }
      const std::string value = extent_value(kernel, e);
      if (bound.blocked(i) && dim == 0)
        fixed += "  kiln_bad |= !kiln::blocks_hold(*kiln_args[" + std::to_string(i) + "], " +
                 std::to_string(kernel.args[i].rank) + ", " + value + ");\n";
      else
        fixed += "  kiln_bad |= " + shape_of(i, dim) + " != " + value +
                 (e.of == Extent::Of::param ? " || " + value + " < 0" : "") + ";\n";
    }
  std::string out = "  // extents (#pragma kiln size): refused before any work\n  bool kiln_bad = false;\n";
  out += fixed;
  for (std::size_t s = 0; s < kernel.sizes.size(); ++s) out += size_checks(kernel, bound, s, uses[s]);
  for (std::size_t i = 0; i < kernel.args.size(); ++i) out += table_target_check(kernel, bound, i);
  out += "  if (kiln_bad) return kiln::extent_status;\n";
  return out;
}

// A file name inside a #line directive is a string literal.
std::string quoted(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// The prelude (check mode's switch first), then a #line naming what follows.
std::string preamble(const KernelInfo& kernel, bool specialised, bool check, std::string_view prelude,
                     std::string_view what) {
  std::string out;
  out.reserve(prelude.size() + kernel.body.size() + 4096);
  if (check) out += "#define KILN_CHECK 1\n";
  out += "#line 1 \"kiln_prelude.hpp\"\n";
  out += prelude;
  out += "\n#line 1 \"<kiln generated: " + kernel.name + (specialised ? ", specialised" : ", generic") +
         (check ? ", check mode" : "") + std::string(what) + ">\"\n";
  return out;
}

// Check mode: the report the caller passes after the temporaries, and where
// a violation jumps back to (the entry then returns kiln::check_status).
std::string check_report(const KernelInfo& kernel) {
  const std::string slot = std::to_string(kernel.args.size() + kernel.temporaries.size());
  return "  kiln::CheckReport* const kiln_report = static_cast<kiln::CheckReport*>(kiln_args[" + slot + "]->data);\n"
         "  if (__builtin_setjmp(kiln_report->jump)) return kiln::check_status;\n";
}

// The CPU's iteration helpers take the call's context first (the prelude,
// "threads"): each call `kiln::for_each_<helper>(` of the kernel's text gets
// `kiln_ctx, ` after its parenthesis. Lines stay where they were.
std::string with_context(std::string_view body) {
  const auto is_word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  std::string out;
  out.reserve(body.size() + 256);
  std::size_t i = 0;
  while (i < body.size()) {
    const std::size_t at = body.find("kiln", i);
    if (at == std::string_view::npos) break;
    std::size_t j = at + 4;
    const auto skip_blanks = [&] {
      while (j < body.size() && (body[j] == ' ' || body[j] == '\t')) ++j;
    };
    skip_blanks();
    bool rewritten = false;
    if ((at == 0 || !is_word(body[at - 1])) && body.substr(j, 2) == "::") {
      j += 2;
      skip_blanks();
      std::size_t name_end = j;
      while (name_end < body.size() && is_word(body[name_end])) ++name_end;
      const std::string_view name = body.substr(j, name_end - j);
      j = name_end;
      skip_blanks();
      for (std::string_view helper : kPhaseHelpers)
        if (name == helper && j < body.size() && body[j] == '(') {
          out.append(body.substr(i, j + 1 - i));
          out += "kiln_ctx, ";
          i = j + 1;
          rewritten = true;
          break;
        }
    }
    if (!rewritten) {
      out.append(body.substr(i, at + 4 - i));
      i = at + 4;
    }
  }
  out.append(body.substr(i));
  return out;
}

// The parameters, the argument views, then the body under its own #line.
std::string entry_body(const KernelInfo& kernel, const BoundSpec& bound, bool specialised, bool cpu, bool check) {
  std::string out;
  // A run-time value (Spec::run_time) is read as a generic build reads it.
  for (std::size_t i = 0; i < kernel.params.size(); ++i)
    out += param_declaration(kernel.params[i], i, bound.values[i], specialised && !bound.run_time[i]);
  if (check) out += check_report(kernel);
  out += arg_declarations(kernel, bound, cpu, check);
  if (cpu) out += extent_checks(kernel, bound);  // a GPU launcher checks them on the host
  out += temporary_declarations(kernel, bound, cpu, check);
  if (check) out += table_declarations(kernel, bound);
  out += "  {\n#line 1 " + quoted(kernel.file_name) + "\n";
  out += cpu ? with_context(kernel.body) : kernel.body;
  out += "\n  }\n";
  return out;
}

}  // namespace

std::string generate_source(const KernelInfo& kernel, const BoundSpec& bound, bool specialised,
                            std::string_view prelude, std::string_view entry_symbol, bool check) {
  std::string out = preamble(kernel, specialised, check, prelude, "");
  out += "extern \"C\" int " + std::string(entry_symbol) +
         "(const kiln_arg* const* kiln_args, [[maybe_unused]] const kiln_value* kiln_params, "
         "[[maybe_unused]] const kiln_context* kiln_ctx) {\n";
  out += entry_body(kernel, bound, specialised, true, check);
  out += "  return 0;\n}\n";
  return out;
}

std::string generate_gpu_source(const KernelInfo& kernel, const BoundSpec& bound, bool specialised,
                                std::string_view prelude, std::string_view entry_symbol) {
  const std::size_t passed = kernel.args.size() + kernel.temporaries.size();
  const std::size_t n_args = passed == 0 ? 1 : passed;
  const std::size_t n_params = kernel.params.empty() ? 1 : kernel.params.size();
  std::string out = preamble(kernel, specialised, false, prelude, ", gpu");
  out += "struct kiln_gpu_args { kiln_arg a[" + std::to_string(n_args) + "]; };\n";
  out += "struct kiln_gpu_params { kiln_value v[" + std::to_string(n_params) + "]; };\n";
  out += "extern \"C\" __global__ void " + std::string(entry_symbol) +
         "(const kiln_gpu_args kiln_a, [[maybe_unused]] const kiln_gpu_params kiln_p) {\n";
  // The CPU entry's names, so the declarations below serve both.
  out += "  [[maybe_unused]] const kiln_arg* const kiln_args[" + std::to_string(n_args) + "] = {";
  for (std::size_t i = 0; i < n_args; ++i) out += (i ? ", &kiln_a.a[" : "&kiln_a.a[") + std::to_string(i) + "]";
  out += "};\n  [[maybe_unused]] const kiln_value* const kiln_params = kiln_p.v;\n";
  out += entry_body(kernel, bound, specialised, false, false);
  out += "}\n";
  return out;
}

}  // namespace kiln::lang
