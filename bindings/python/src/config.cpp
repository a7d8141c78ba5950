#include "config.hpp"

#include <chrono>
#include <cmath>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <nanobind/stl/string.h>

#include "values.hpp"
#include "kiln/errors.hpp"

namespace nb = nanobind;

namespace kiln::python {
namespace {

[[noreturn]] void bad_setting(const std::string& name, const std::string& what) {
  throw Error("kiln.Runtime: setting '" + name + "': " + what);
}

std::filesystem::path path_of(const std::string& name, nb::handle value) {
  nb::object text = nb::steal(PyOS_FSPath(value.ptr()));  // str, bytes or os.PathLike
  if (!text.is_valid() || !PyUnicode_Check(text.ptr())) {
    PyErr_Clear();
    bad_setting(name, "expected a path (str or os.PathLike), got " + type_of(value));
  }
  return nb::cast<std::string>(text);
}

std::vector<std::filesystem::path> paths_of(const std::string& name, nb::handle value) {
  if (PyUnicode_Check(value.ptr())) bad_setting(name, "expected a list of paths, got one str");
  std::vector<std::filesystem::path> paths;
  for (nb::handle item : value) paths.push_back(path_of(name, item));
  return paths;
}

bool bool_of(const std::string& name, nb::handle value) {
  if (!PyBool_Check(value.ptr())) bad_setting(name, "expected True or False, got " + nb::cast<std::string>(nb::repr(value)));
  return value.ptr() == Py_True;
}

std::uint64_t count_of(const std::string& name, nb::handle value) {
  if (PyBool_Check(value.ptr()) || !PyIndex_Check(value.ptr()))
    bad_setting(name, "expected an int, got " + nb::cast<std::string>(nb::repr(value)));
  const std::optional<long long> number = int64_of(value);
  if (!number) bad_setting(name, "expected a 64-bit integer, got " + nb::cast<std::string>(nb::repr(value)));
  if (*number < 0) bad_setting(name, "expected 0 or more, got " + std::to_string(*number));
  return static_cast<std::uint64_t>(*number);
}

std::chrono::milliseconds seconds_of(const std::string& name, nb::handle value) {
  if (PyBool_Check(value.ptr()) || !PyNumber_Check(value.ptr()))
    bad_setting(name, "expected seconds (a number), got " + nb::cast<std::string>(nb::repr(value)));
  const double seconds = nb::cast<double>(value);
  if (!(seconds >= 0 && seconds < 1e9)) bad_setting(name, "expected 0 to 1e9 seconds, got " + std::to_string(seconds));
  return std::chrono::milliseconds(static_cast<std::int64_t>(std::llround(seconds * 1000)));
}

std::string text_of(const std::string& name, nb::handle value) {
  if (!PyUnicode_Check(value.ptr())) bad_setting(name, "expected a str, got " + nb::cast<std::string>(nb::repr(value)));
  return nb::cast<std::string>(value);
}

nb::list path_list(const std::vector<std::filesystem::path>& paths) {
  nb::list out;
  for (const auto& path : paths) out.append(path.string());
  return out;
}

double seconds(std::chrono::milliseconds ms) { return static_cast<double>(ms.count()) / 1000.0; }

// One setting: how a value is read into a Config, and read back.
struct Setting {
  const char* name;
  std::function<void(Config&, const std::string&, nb::handle)> set;
  std::function<nb::object(const Config&)> get;
};

const std::vector<Setting>& settings() {
  using C = Config;
  using N = const std::string&;
  static const std::vector<Setting> table = {
      {"cache_dir", [](C& c, N n, nb::handle v) { c.cache_dir = path_of(n, v); },
       [](const C& c) { return nb::cast(c.cache_dir.string()); }},
      {"index_path", [](C& c, N n, nb::handle v) { c.index_path = path_of(n, v); },
       [](const C& c) { return nb::cast(c.index_path.string()); }},
      {"use_disk_cache", [](C& c, N n, nb::handle v) { c.use_disk_cache = bool_of(n, v); },
       [](const C& c) { return nb::cast(c.use_disk_cache); }},
      {"print_metrics", [](C& c, N n, nb::handle v) { c.print_metrics = bool_of(n, v); },
       [](const C& c) { return nb::cast(c.print_metrics); }},
      {"metrics_file", [](C& c, N n, nb::handle v) { c.metrics_file = path_of(n, v); },
       [](const C& c) { return nb::cast(c.metrics_file.string()); }},
      {"time_calls", [](C& c, N n, nb::handle v) { c.time_calls = bool_of(n, v); },
       [](const C& c) { return nb::cast(c.time_calls); }},
      {"log_level", [](C& c, N n, nb::handle v) { c.log_level = text_of(n, v); },
       [](const C& c) { return nb::cast(c.log_level); }},
      {"lock_timeout", [](C& c, N n, nb::handle v) { c.lock_timeout = seconds_of(n, v); },
       [](const C& c) { return nb::cast(seconds(c.lock_timeout)); }},
      {"read_only_tiers", [](C& c, N n, nb::handle v) { c.read_only_tiers = paths_of(n, v); },
       [](const C& c) { return nb::object(path_list(c.read_only_tiers)); }},
      {"trusted_dirs", [](C& c, N n, nb::handle v) { c.trusted_dirs = paths_of(n, v); },
       [](const C& c) { return nb::object(path_list(c.trusted_dirs)); }},
      {"cache_max_size", [](C& c, N n, nb::handle v) { c.cache_max_size = count_of(n, v); },
       [](const C& c) { return nb::cast(c.cache_max_size); }},
      {"build_threads", [](C& c, N n, nb::handle v) { c.build_threads = static_cast<unsigned>(count_of(n, v)); },
       [](const C& c) { return nb::cast(c.build_threads); }},
      {"build_slots",
       [](C& c, N n, nb::handle v) {
         if (v.is_none()) c.build_slots.reset();
         else c.build_slots = static_cast<unsigned>(count_of(n, v));
       },
       [](const C& c) { return c.build_slots ? nb::cast(*c.build_slots) : nb::object(nb::none()); }},
      {"build_slot_dir", [](C& c, N n, nb::handle v) { c.build_slot_dir = path_of(n, v); },
       [](const C& c) { return nb::cast(c.build_slot_dir.string()); }},
      {"compile_timeout", [](C& c, N n, nb::handle v) { c.compile_timeout = seconds_of(n, v); },
       [](const C& c) { return nb::cast(seconds(c.compile_timeout)); }},
      {"compile_memory", [](C& c, N n, nb::handle v) { c.compile_memory = count_of(n, v); },
       [](const C& c) { return nb::cast(c.compile_memory); }},
      {"opt_level", [](C& c, N n, nb::handle v) { c.opt_level = text_of(n, v); },
       [](const C& c) { return nb::cast(c.opt_level); }},
      {"fp_contract", [](C& c, N n, nb::handle v) { c.fp_contract = text_of(n, v); },
       [](const C& c) { return nb::cast(c.fp_contract); }},
      {"target_cpu", [](C& c, N n, nb::handle v) { c.target_cpu = text_of(n, v); },
       [](const C& c) { return nb::cast(c.target_cpu); }},
      {"gather", [](C& c, N n, nb::handle v) { c.gather = text_of(n, v); },
       [](const C& c) { return nb::cast(c.gather); }},
      {"check", [](C& c, N n, nb::handle v) { c.check = bool_of(n, v); }, [](const C& c) { return nb::cast(c.check); }},
      {"tiered", [](C& c, N n, nb::handle v) { c.tiered = bool_of(n, v); },
       [](const C& c) { return nb::cast(c.tiered); }},
      {"threads",
       [](C& c, N n, nb::handle v) {
         const std::uint64_t threads = count_of(n, v);
         if (threads > static_cast<std::uint64_t>(Config::kMaxThreads))
           bad_setting(n, "expected 0 (the default) to " + std::to_string(Config::kMaxThreads) + ", got " +
                              std::to_string(threads));
         c.threads = static_cast<int>(threads);
       },
       [](const C& c) { return nb::cast(c.threads); }},
  };
  return table;
}

const Setting* find_setting(const std::string& name) {
  for (const Setting& setting : settings())
    if (name == setting.name) return &setting;
  return nullptr;
}

}  // namespace

Config config_from(const nb::kwargs& values) {
  Config config = Config::from_env();
  for (auto [key, value] : values) {
    const std::string name = nb::cast<std::string>(key);
    const Setting* setting = find_setting(name);
    if (setting == nullptr) {
      std::string known;
      for (const Setting& s : settings()) known += (known.empty() ? "" : ", ") + std::string(s.name);
      throw Error("kiln.Runtime: unknown setting '" + name + "'; settings: " + known);
    }
    setting->set(config, name, value);
  }
  // As the KILN_METRICS variables do: asking for metrics times every call.
  config.time_calls = config.time_calls || config.print_metrics || !config.metrics_file.empty();
  return config;
}

nb::dict config_dict(const Config& config) {
  nb::dict out;
  for (const Setting& setting : settings()) out[setting.name] = setting.get(config);
  return out;
}

}  // namespace kiln::python
