// The figures issue 31 names, each with its target, gathered from the
// checks' sections at the end of a GPU run: what a reader (and the README)
// takes from the run.
#include <algorithm>
#include <cstdio>

#include "cli/gpu/checks.hpp"

namespace kiln::gpu_check {
namespace {

using Json = nlohmann::ordered_json;

// The values of `field` over the rows of `rows` that have it (and, with `pick`, are picked).
// (The document is read with at() and value(): a const operator[] of a missing key is undefined.)
std::vector<double> values(const Json& rows, const char* field, bool (*pick)(const Json&) = nullptr) {
  std::vector<double> out;
  for (const Json& row : rows)
    if (row.contains(field) && row[field].is_number() && (!pick || pick(row))) out.push_back(row[field].get<double>());
  return out;
}

bool point_wise(const Json& row) { return row.contains("neighbour_tables") && !row["neighbour_tables"].get<bool>(); }

}  // namespace

void summarise(Context& ctx) {
  const Json& doc = ctx.report.doc;
  Json summary = Json::object();
  std::printf("\nsummary\n");
  if (doc.contains("correctness")) {
    summary["correctness_pass"] = doc.at("correctness").value("pass", false);
    std::size_t stages = 0, identical = 0;
    for (const Json& c : doc.at("correctness").value("cases", Json::array()))
      for (const Json& row : c.value("stages", Json::array())) {
        ++stages;
        identical += row.value("identical", false) ? 1 : 0;
      }
    summary["correctness_stages"] = stages;
    summary["correctness_identical"] = identical;
    std::printf("  correctness: %zu stage runs (%zu cases), %zu identical to the CPU: %s\n", stages,
                doc.at("correctness").value("cases", Json::array()).size(), identical,
                summary["correctness_pass"].get<bool>() ? "all pass" : "FAIL");
  }
  if (doc.contains("launch")) {
    const std::vector<double> over =
        values(doc.at("launch").value("stages", Json::array()), "kiln_minus_raw_launch_us");
    const std::vector<double> over_coop =
        values(doc.at("launch").value("stages", Json::array()), "kiln_minus_raw_cooperative_us");
    if (!over.empty()) {
      const double worst = *std::max_element(over.begin(), over.end());
      const double worst_coop = *std::max_element(over_coop.begin(), over_coop.end());
      summary["launch_kiln_minus_raw_us_worst"] = worst;
      summary["launch_kiln_minus_raw_cooperative_us_worst"] = worst_coop;
      summary["launch_target_met"] = worst <= 0.3;
      std::printf(
          "  launch: kiln - raw cuLaunchKernel at most %+.3f us, - raw cuLaunchCooperativeKernel at most "
          "%+.3f us (target <= +0.3 us: %s)\n",
          worst, worst_coop, worst <= 0.3 ? "met" : "missed");
    }
  }
  if (doc.contains("warm_start") && doc.at("warm_start").contains("total")) {
    const Json& t = doc.at("warm_start").at("total");
    summary["warm_start_ratio"] = t.at("ratio");
    std::printf(
        "  warm start: %lld kernels, kiln %.2f ms against cuModuleLoadData + cuModuleGetFunction %.2f ms "
        "(%.2fx)\n",
        t.at("kernels").get<long long>(), t.at("kiln_ms").get<double>(), t.at("raw_ms").get<double>(),
        t.at("ratio").get<double>());
  }
  if (doc.contains("bandwidth") && doc.at("bandwidth").contains("stages")) {
    const std::vector<double> pct = values(doc.at("bandwidth").at("stages"), "percent_of_copy", point_wise);
    if (!pct.empty()) {
      const double worst = *std::min_element(pct.begin(), pct.end());
      summary["bandwidth_point_wise_percent_worst"] = worst;
      summary["bandwidth_target_met"] = worst >= 80.0;
      std::printf(
          "  bandwidth: stages without neighbour tables at least %.1f%% of the device copy (target >= 80%%: "
          "%s)\n",
          worst, worst >= 80.0 ? "met" : "missed");
    }
  }
  ctx.report.doc["summary"] = std::move(summary);
}

}  // namespace kiln::gpu_check
