#include "runtime/config/compile_options.hpp"

#include <algorithm>

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

// The request's target features for Config::gather (checked first): "auto"
// sends none, so the key holds nothing more than the CPU already gives.
std::string gather_features(const std::string& gather) {
  if (gather == "on") return "-prefer-no-gather";
  if (gather == "off") return "+prefer-no-gather";
  return {};
}

}  // namespace

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
  options.features = gather_features(config.gather);
  options.key = options.key_at(config.opt_level);
  return options;
}

std::string CompileOptions::key_at(std::string_view level) const {
  if (level.empty()) return key;
  // The optimisation flags as the key always held them ("-O3"), then the contraction.
  std::string out = "-" + std::string(level) + " -ffp-contract=" + fp_contract;
  if (check) out += " check";  // another source: another key
  if (!features.empty()) out += " " + features;  // on or off named: its object, its key
  return out;
}

}  // namespace kiln::runtime
