#include "runtime/config/compile_options.hpp"

#include <algorithm>
#include <cstdlib>

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

// KILN_GATHER, read where it is used (configuration.md's rule: unset or empty
// is the default, anything but the exact words is refused naming it).
std::string gather_features() {
  const char* value = std::getenv("KILN_GATHER");
  const std::string_view text = value ? value : "";
  if (text.empty() || text == "auto") return {};
  if (text == "on") return "-prefer-no-gather";
  if (text == "off") return "+prefer-no-gather";
  throw Error("kiln: KILN_GATHER='" + std::string(text) + "': expected auto, on or off");
}

}  // namespace

bool is_target_cpu(std::string_view name) { return name == "native" || jit::is_known_cpu(name); }

CompileOptions compile_options(const Config& config) {
  check("opt_level", config.opt_level, kOptLevels);
  check("fp_contract", config.fp_contract, kFpContracts);
  check("tiered_opt_level", config.tiered_opt_level, kOptLevels);
  if (!is_target_cpu(config.target_cpu))
    throw Error("kiln: Config::target_cpu '" + config.target_cpu + "': expected " + kTargetCpuChoices);
  CompileOptions options;
  if (config.target_cpu != "native") options.cpu = config.target_cpu;
  options.opt_level = "-" + config.opt_level;
  options.fp_contract = config.fp_contract;
  options.check = config.check;
  options.features = gather_features();
  options.key = options.key_at(config.opt_level);
  return options;
}

std::string CompileOptions::key_at(std::string_view level) const {
  if (level.empty()) return key;
  // The optimisation flags as the key always held them ("-O3"), then the contraction.
  std::string out = "-" + std::string(level) + " -ffp-contract=" + fp_contract;
  if (check) out += " check";  // another source: another key
  if (!features.empty()) out += " " + features;  // KILN_GATHER named: its object, its key
  return out;
}

}  // namespace kiln::runtime
