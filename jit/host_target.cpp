#include "jit/host_target.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include <llvm/ADT/StringMap.h>
#include <llvm/TargetParser/Host.h>

namespace kiln::jit {
namespace {

// getHostCPUFeatures() is an unordered map: sort it so that the same machine
// always yields the same string (it goes into cache keys).
std::string sorted_feature_list() {
  std::vector<std::string> features;
  for (const auto& entry : llvm::sys::getHostCPUFeatures()) {
    std::string feature(1, entry.getValue() ? '+' : '-');
    feature += entry.getKey();
    features.push_back(std::move(feature));
  }
  // Sort by name, not by the leading sign, so "+avx2" sits beside "-avx512f".
  std::sort(features.begin(), features.end(),
            [](const std::string& a, const std::string& b) { return a.compare(1, std::string::npos, b, 1) < 0; });
  std::string joined;
  for (const auto& f : features) {
    if (!joined.empty()) joined += ',';
    joined += f;
  }
  return joined;
}

HostTarget detect() {
  HostTarget target;
  target.triple = llvm::sys::getProcessTriple();
  target.cpu = llvm::sys::getHostCPUName().str();
  target.features = sorted_feature_list();
  return target;
}

}  // namespace

const HostTarget& host_target() {
  static const HostTarget target = detect();  // thread-safe initialisation
  return target;
}

}  // namespace kiln::jit
