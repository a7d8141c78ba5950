#include "runtime/config/compile_options.hpp"

#include <algorithm>
#include <fstream>

#include "jit/host_target.hpp"
#include "kiln/errors.hpp"

namespace kiln::runtime {
namespace {

template <std::size_t N>
void check(const char* field, const std::string& value, const std::array<std::string_view, N>& choices) {
  if (std::find(choices.begin(), choices.end(), std::string_view(value)) != choices.end()) return;
  std::string expected;
  for (std::size_t i = 0; i < N; ++i) expected += (i == 0 ? "" : ", ") + std::string(choices[i]);
  throw Error(std::string("kiln: Config::") + field + " '" + value + "': expected one of " + expected);
}

// The request's target features for the gather choice as built: "auto"
// sends none, so the key holds nothing more than the CPU already gives.
std::string gather_features(const std::string& gather) {
  if (gather == "on") return "-prefer-no-gather";
  if (gather == "off") return "+prefer-no-gather";
  return {};
}

// What this host's kernel says of Gather Data Sampling, read once ("" where
// it says nothing: another architecture, an older kernel).
const std::string& host_gds_report() {
  static const std::string report = [] {
    std::ifstream file("/sys/devices/system/cpu/vulnerabilities/gather_data_sampling");
    std::string line;
    std::getline(file, line);
    return line;
  }();
  return report;
}

}  // namespace

std::string gather_as_built(const std::string& gather, const std::string& target_cpu, std::string_view gds_report) {
  if (gather != "auto" || target_cpu != "native") return gather;
  return gds_report.starts_with("Mitigation: Microcode") ? "off" : "auto";
}

std::string gather_as_built(const Config& config) {
  return gather_as_built(config.gather, config.target_cpu, host_gds_report());
}

bool is_target_cpu(std::string_view name) { return name == "native" || jit::is_known_cpu(name); }

CompileOptions compile_options(const Config& config) {
  check("opt_level", config.opt_level, kOptLevels);
  check("fp_contract", config.fp_contract, kFpContracts);
  check("tiered_opt_level", config.tiered_opt_level, kOptLevels);
  check("gather", config.gather, kGathers);
  if (!is_target_cpu(config.target_cpu))
    throw Error("kiln: Config::target_cpu '" + config.target_cpu + "': expected " + kTargetCpuChoices);
  CompileOptions options;
  if (config.target_cpu != "native") options.cpu = config.target_cpu;
  options.opt_level = "-" + config.opt_level;
  options.fp_contract = config.fp_contract;
  options.check = config.check;
  options.gather = gather_as_built(config);
  options.features = gather_features(options.gather);
  options.key = options.key_at(config.opt_level);
  return options;
}

std::string CompileOptions::key_at(std::string_view level) const {
  if (level.empty()) return key;
  // The optimisation flags as the key always held them ("-O3"), then the contraction.
  std::string out = "-";  // appended piece by piece: GCC 12 warns (-Wrestrict) of "-" + std::string(...) here
  out.append(level).append(" -ffp-contract=").append(fp_contract);
  if (check) out += " check";  // another source: another key
  if (!features.empty()) out += " " + features;  // on or off named: its object, its key
  return out;
}

}  // namespace kiln::runtime
