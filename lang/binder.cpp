#include "lang/binder.hpp"

#include <cmath>

#include "kiln/errors.hpp"

namespace kiln::lang {
namespace {

[[noreturn]] void fail(const KernelInfo& kernel, const std::string& name, const std::string& what) {
  throw SpecError("kiln: kernel '" + kernel.name + "', parameter '" + name + "': " + what);
}

std::string expected(const ParamDecl& param) {
  if (param.kind == ParamKind::domain) return "an integer (domain parameter)";
  if (param.type == ElementType::boolean) return "a bool";
  return param.type == ElementType::f64 ? "a double" : "an integer";
}

std::string given(const Spec::Value& value) {
  static const char* kNames[] = {"a bool", "an integer", "a double", "strides", "a blocked layout"};
  return kNames[value.index()];
}

kiln_value bind_value(const KernelInfo& kernel, const ParamDecl& param, const Spec::Value& value) {
  kiln_value out{};
  const auto mismatch = [&] { fail(kernel, param.name, "expected " + expected(param) + ", got " + given(value)); };
  if (param.type == ElementType::f64) {
    if (const auto* d = std::get_if<double>(&value)) out.f64 = *d;
    else if (const auto* i = std::get_if<std::int64_t>(&value);
             i && static_cast<std::int64_t>(static_cast<double>(*i)) == *i)
      out.f64 = static_cast<double>(*i);
    else mismatch();
  } else if (param.type == ElementType::boolean) {
    const auto* b = std::get_if<bool>(&value);
    if (!b) mismatch();
    out.i64 = *b ? 1 : 0;
  } else {
    const auto* i = std::get_if<std::int64_t>(&value);
    if (!i) mismatch();
    out.i64 = *i;
  }
  return out;
}

void bind_strides(const KernelInfo& kernel, const ArgDecl& arg, const Spec::Strides& strides,
                  std::optional<Spec::Strides>& out) {
  if (static_cast<int>(strides.size()) == arg.rank + 1)
    fail(kernel, arg.name,
         "expected " + std::to_string(arg.rank) + " strides (its rank), got " + std::to_string(strides.size()) +
             ": one more, as a blocked array (nproma, ..., nblks) has; say so with Spec::blocked_like");
  if (static_cast<int>(strides.size()) != arg.rank)
    fail(kernel, arg.name,
         "expected " + std::to_string(arg.rank) + " strides (its rank), got " + std::to_string(strides.size()));
  out = strides;
}

void bind_blocks(const KernelInfo& kernel, const ArgDecl& arg, const Spec::Blocks& blocks, BoundSpec& bound,
                 std::size_t index) {
  if (blocks.nproma < 1)
    fail(kernel, arg.name, "blocked with nproma " + std::to_string(blocks.nproma) + ": nproma must be at least 1");
  if (blocks.nblks < 0)
    fail(kernel, arg.name, "blocked with " + std::to_string(blocks.nblks) + " blocks: the count is 1 or more, or 0 "
                           "for one read at each call");
  if (arg.rank > 3) fail(kernel, arg.name, "is of rank 4: a blocked array has at most 3 dimensions besides its blocks");
  if (!blocks.strides.empty() && static_cast<int>(blocks.strides.size()) != arg.rank + 1)
    fail(kernel, arg.name,
         "blocked: expected " + std::to_string(arg.rank + 1) + " strides (its rank and the blocks), got " +
             std::to_string(blocks.strides.size()));
  bound.nproma[index] = blocks.nproma;
  bound.nblks[index] = blocks.nblks;
  if (!blocks.strides.empty()) bound.strides[index] = blocks.strides;
}

void bind_layout(const KernelInfo& kernel, const ArgDecl& arg, const Spec::Value& value, BoundSpec& bound,
                 std::size_t index) {
  if (arg.rank == 0) fail(kernel, arg.name, "is a run-time scalar argument, not a specialisation parameter");
  if (const auto* strides = std::get_if<Spec::Strides>(&value))
    bind_strides(kernel, arg, *strides, bound.strides[index]);
  else if (const auto* blocks = std::get_if<Spec::Blocks>(&value))
    bind_blocks(kernel, arg, *blocks, bound, index);
  else
    fail(kernel, arg.name, "is an array: expected its strides or its blocks, got " + given(value));
}

std::string declared_parameters(const KernelInfo& kernel) {
  std::string list;
  for (const auto& p : kernel.params) list += (list.empty() ? "" : ", ") + p.name;
  return list.empty() ? "none" : list;
}

}  // namespace

BoundSpec bind_spec(const KernelInfo& kernel, const Spec& spec) {
  BoundSpec bound;
  bound.values.resize(kernel.params.size());
  bound.run_time.assign(kernel.params.size(), false);
  bound.strides.resize(kernel.args.size());
  bound.nproma.assign(kernel.args.size(), kFlat);
  bound.nblks.assign(kernel.args.size(), 0);
  std::vector<bool> seen(kernel.params.size(), false);
  for (const auto& [name, value, run_time] : spec.entries()) {
    if (const ParamDecl* param = kernel.find_param(name)) {
      const auto index = static_cast<std::size_t>(param - kernel.params.data());
      bound.values[index] = bind_value(kernel, *param, value);
      bound.run_time[index] = run_time;
      seen[index] = true;
    } else if (const ArgDecl* arg = kernel.find_arg(name)) {
      bind_layout(kernel, *arg, value, bound, static_cast<std::size_t>(arg - kernel.args.data()));
    } else if (std::holds_alternative<Spec::Strides>(value) || std::holds_alternative<Spec::Blocks>(value)) {
      // Strides or blocks name an array: an unknown one is not called a parameter.
      std::string arrays;
      for (const ArgDecl& arg : kernel.args) arrays += (arrays.empty() ? "" : ", ") + arg.name;
      throw SpecError("kiln: kernel '" + kernel.name + "', array '" + name + "': unknown (its strides or blocks " +
                      "were given); the kernel's arrays: " + (arrays.empty() ? "none" : arrays));
    } else {
      fail(kernel, name, "unknown; the kernel declares: " + declared_parameters(kernel));
    }
  }
  for (std::size_t i = 0; i < kernel.params.size(); ++i)
    if (!seen[i])
      fail(kernel, kernel.params[i].name, "missing: expected " + expected(kernel.params[i]));
  return bound;
}

std::string forget_values(BoundSpec& bound) {
  std::string layout;
  bound.strides.assign(bound.strides.size(), std::nullopt);
  bound.nblks.assign(bound.nblks.size(), 0);
  for (std::size_t i = 0; i < bound.nproma.size(); ++i)
    if (bound.blocked(i)) {
      bound.nproma[i] = kRunTimeNproma;
      layout += "blocked:" + std::to_string(i) + ";";
    }
  return layout;
}

}  // namespace kiln::lang
