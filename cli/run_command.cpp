// `kiln run KERNEL --spec ... --in name=file.npy ... --out DIR`: one kernel on
// arrays saved by NumPy. The kernel's declarations drive the command: which
// names --spec must give (its parameters and scalar arguments, typed as
// declared) and which arrays it takes (element type and rank). They do not say
// which arrays a kernel writes, so every array argument is written to
// DIR/<name>.npy after the call.
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "cli/commands.hpp"
#include "cli/npy_io.hpp"
#include "cli/spec_options.hpp"
#include "kiln/kiln.hpp"

namespace kiln::cli {
namespace {

struct RunOptions {
  std::string kernel;
  std::vector<std::string> spec;    // name=value
  std::vector<std::string> inputs;  // name=file.npy
  std::vector<std::string> shapes;  // name=AxB
  std::vector<std::filesystem::path> kernel_files;
  std::filesystem::path out_dir;
  bool generic = false;
  bool check = false;
};

// ---- reading the options --------------------------------------------------------

// "AxB" -> {A, B}: positive extents.
std::optional<std::vector<std::int64_t>> parse_shape(std::string_view text) {
  std::vector<std::int64_t> shape;
  while (true) {
    const auto x = text.find('x');
    const auto extent = parse_number<std::int64_t>(text.substr(0, x));
    if (!extent || *extent <= 0) return std::nullopt;
    shape.push_back(*extent);
    if (x == std::string_view::npos) return shape;
    text.remove_prefix(x + 1);
  }
}

// ---- what the kernel declares ------------------------------------------------------

std::string describe(const KernelArgument& arg) {
  if (arg.rank == 0) return std::string(type_name(arg.type)) + " scalar";
  return std::string(type_name(arg.type)) + " array of rank " + std::to_string(arg.rank) + " (.npy dtype '" +
         std::string(npy_dtype(arg.type)) + "', " + std::to_string(arg.rank) + " dimension" +
         (arg.rank > 1 ? "s" : "") + ")";
}

const KernelArgument* find_argument(const KernelDeclaration& kernel, std::string_view name) {
  for (const KernelArgument& arg : kernel.arguments)
    if (arg.name == name) return &arg;
  return nullptr;
}

const KernelParameter* find_parameter(const KernelDeclaration& kernel, std::string_view name) {
  for (const KernelParameter& param : kernel.parameters)
    if (param.name == name) return &param;
  return nullptr;
}

std::string array_names(const KernelDeclaration& kernel) {
  std::string list;
  for (const KernelArgument& arg : kernel.arguments)
    if (arg.rank > 0) list += (list.empty() ? "" : ", ") + arg.name;
  return list.empty() ? "none" : list;
}

std::string where(const KernelDeclaration& kernel) { return kernel_context(kernel.name); }

// ---- --spec: the Spec and the scalar arguments ------------------------------------

struct SpecValues {
  Spec spec;
  std::map<std::string, kiln_arg, std::less<>> scalars;
};

// The declarations as spec_options.cpp reads them: the parameters, then the arguments.
SpecDeclarations spec_declarations(const KernelDeclaration& kernel) {
  SpecDeclarations declared{kernel.name, {}};
  for (const KernelParameter& param : kernel.parameters)
    declared.names.push_back(
        {param.name, param.type, param.domain ? SpecRole::domain_parameter : SpecRole::static_parameter});
  for (const KernelArgument& arg : kernel.arguments)
    declared.names.push_back(
        {arg.name, arg.type, arg.rank == 0 ? SpecRole::scalar_argument : SpecRole::array_argument});
  return declared;
}

// The parsed --spec as the call takes it: parameters in a Spec (int32 and
// int64 as integers), scalar arguments as kiln_args of their declared type.
SpecValues spec_values(const KernelDeclaration& kernel, const std::vector<std::string>& entries) {
  const ParsedSpec parsed = parse_spec(spec_declarations(kernel), entries);
  SpecValues values;
  for (const auto& param : parsed.parameters)
    std::visit([&](auto v) { values.spec.set(param.first, v); }, param.second);
  for (const auto& [name, value] : parsed.scalars)
    values.scalars[name] = std::visit([](auto v) { return scalar(v); }, value);
  return values;
}

// ---- --in and --shape: the arrays ---------------------------------------------

// A name given to --in or --shape must be an array argument.
void check_array_names(const KernelDeclaration& kernel, const Pairs& pairs, const std::string& option) {
  for (const auto& [name, _] : pairs) {
    const KernelArgument* arg = find_argument(kernel, name);
    if (arg && arg->rank > 0) continue;
    const bool in_spec = arg || find_parameter(kernel, name);
    throw ArgumentError(where(kernel) + option + " " + name + ": " +
                        (in_spec ? "'" + name + "' is not an array: give its value in --spec"
                                 : "no array argument '" + name + "'; the kernel's arrays: " + array_names(kernel)));
  }
}

HostArray read_input(const KernelDeclaration& kernel, const KernelArgument& arg, const std::string& file) {
  const std::string what = where(kernel) + "argument '" + arg.name + "' (--in " + arg.name + "=" + file + "): ";
  try {
    HostArray array = load_npy(file);
    if (array.type() != arg.type || array.shape().size() != static_cast<std::size_t>(arg.rank))
      throw ArgumentError(what + "expected " + with_article(describe(arg)) + ", got dtype '" +
                          std::string(npy_dtype(array.type())) + "' of shape " + shape_text(array.shape()));
    return array;
  } catch (const NpyError& e) {
    throw ArgumentError(what + e.what());
  }
}

HostArray zero_array(const KernelDeclaration& kernel, const KernelArgument& arg, const std::string& text) {
  const std::string what = where(kernel) + "argument '" + arg.name + "' (--shape " + arg.name + "=" + text + "): ";
  const auto shape = parse_shape(text);
  if (!shape || shape->size() != static_cast<std::size_t>(arg.rank))
    throw ArgumentError(what + "expected " + std::to_string(arg.rank) + " positive extents joined by 'x' for " +
                        with_article(describe(arg)));
  try {
    return HostArray::zeros(arg.type, *shape, Order::c);
  } catch (const NpyError& e) {
    throw ArgumentError(what + e.what());
  }
}

// Every array argument by name: read from its --in file, or zeros of its --shape (C order).
std::map<std::string, HostArray> gather_arrays(const KernelDeclaration& kernel, const Pairs& inputs,
                                               const Pairs& shapes) {
  check_array_names(kernel, inputs, "--in");
  check_array_names(kernel, shapes, "--shape");
  std::map<std::string, HostArray> arrays;
  for (const KernelArgument& arg : kernel.arguments) {
    if (arg.rank == 0) continue;
    const auto input = inputs.find(arg.name);
    const auto shape = shapes.find(arg.name);
    if (input != inputs.end() && shape != shapes.end())
      throw ArgumentError(where(kernel) + "argument '" + arg.name + "' is given with both --in and --shape");
    if (input == inputs.end() && shape == shapes.end())
      throw ArgumentError(where(kernel) + "argument '" + arg.name + "', " + with_article(describe(arg)) +
                          ", is missing: give --in " + arg.name + "=FILE.npy, or --shape " + arg.name +
                          "=AxB to start from zeros");
    arrays.emplace(arg.name, input != inputs.end() ? read_input(kernel, arg, input->second)
                                                   : zero_array(kernel, arg, shape->second));
  }
  return arrays;
}

// ---- the run ------------------------------------------------------------------

// Before the run: a folder that cannot be made should not cost a compile.
void make_out_dir(const std::filesystem::path& dir) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) throw Error("kiln run: --out " + dir.string() + ": cannot create the folder (" + error.message() + ")");
}

void write_outputs(const std::filesystem::path& dir, const std::map<std::string, HostArray>& arrays) {
  for (const auto& [name, array] : arrays) {
    const std::filesystem::path file = dir / (name + ".npy");
    save_npy(file, array);
    std::printf("%s  %s %s, %s order\n", file.c_str(), std::string(npy_dtype(array.type())).c_str(),
                shape_text(array.shape()).c_str(), array.order() == Order::fortran ? "Fortran" : "C");
  }
}

// A Runtime as KILN_* configures it; --check turns check mode on (KILN_CHECK=1 does too).
Config run_config(const RunOptions& o) {
  Config config = Config::from_env();
  if (o.check) config.check = true;
  return config;
}

void run_kernel(const RunOptions& o) {
  Runtime rt(run_config(o));
  for (const std::filesystem::path& file : o.kernel_files) rt.register_kernel_file(file);
  const KernelDeclaration kernel = rt.declaration(o.kernel);
  SpecValues values = spec_values(kernel, o.spec);
  const std::map<std::string, HostArray> arrays = gather_arrays(
      kernel, split_pairs("--in", o.inputs, "name=FILE.npy"), split_pairs("--shape", o.shapes, "name=AxB"));

  // Arguments in declaration order. Specialised, each array's strides are
  // compile-time constants too (a generic build ignores them).
  std::vector<kiln_arg> args;
  for (const KernelArgument& arg : kernel.arguments) {
    if (arg.rank == 0) {
      args.push_back(values.scalars.at(arg.name));
      continue;
    }
    args.push_back(arrays.at(arg.name).view());
    values.spec.strides_of(arg.name, args.back());
  }
  make_out_dir(o.out_dir);
  rt.kernel(kernel.name, values.spec, o.generic ? Mode::generic : Mode::specialised).invoke(args);
  write_outputs(o.out_dir, arrays);
}

}  // namespace

void add_run_command(CLI::App& app) {
  auto options = std::make_shared<RunOptions>();
  CLI::App* run = app.add_subcommand(
      "run", "Run one kernel on arrays from NumPy .npy files; write every array argument to DIR/<name>.npy");
  run->add_option("kernel", options->kernel, "the kernel's name")->required();
  // One value per occurrence: a greedy list would swallow the kernel's name.
  run->add_option("--spec", options->spec, "name=value[,name=value...]: every parameter and scalar argument")
      ->delimiter(',')
      ->allow_extra_args(false);
  run->add_option("--in", options->inputs, "name=FILE.npy: an array argument, C or Fortran order (repeat)")
      ->allow_extra_args(false);
  run->add_option("--shape", options->shapes, "name=AxB: an array argument that starts as zeros, C order (repeat)")
      ->delimiter(',')
      ->allow_extra_args(false);
  run->add_option("--kernel-file", options->kernel_files, "register a kernel source file first (repeat)")
      ->check(CLI::ExistingFile)
      ->allow_extra_args(false);
  run->add_option("--out", options->out_dir, "folder for the results (created if missing)")->required();
  run->add_flag("--generic", options->generic, "pass the --spec values at run time instead of specialising on them");
  run->add_flag("--check", options->check,
                "check mode (as KILN_CHECK=1): bounds-checked arrays and range-checked tables; the first "
                "violation stops the kernel and names the array, index and point");
  run->callback([options] { run_kernel(*options); });
}

}  // namespace kiln::cli
