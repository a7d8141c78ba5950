// kiln_gpu_check's report and summary (cli/gpu), which need no GPU: a check
// that throws is recorded and the next one runs, the JSON is written with the
// exit status, and the summary takes each figure's worst case against its
// target (the launch's largest excess over the raw launch, the point-wise
// stages' lowest share of the copy; stages with neighbour tables left out).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "cli/gpu/checks.hpp"

namespace kiln::gpu_check {
namespace {

using Json = nlohmann::ordered_json;

TEST(GpuCheckReport, AThrowingCheckIsRecordedTheNextRunsAndTheJsonHasTheExitStatus) {
  Report report;
  bool second_ran = false;
  report.run("first", [] { throw std::runtime_error("the driver refused"); });
  report.run("second", [&] { second_ran = true; });
  EXPECT_TRUE(second_ran);
  EXPECT_EQ(report.errors(), 1);
  EXPECT_EQ(report.exit_status(), 1);
  const std::filesystem::path file = std::filesystem::temp_directory_path() / "kiln_gpu_check_report_test.json";
  report.write(file.string(), 1);
  std::ifstream in(file);
  const Json written = Json::parse(in);
  std::filesystem::remove(file);
  ASSERT_EQ(written.at("errors").size(), 1u);
  EXPECT_EQ(written.at("errors")[0].at("check"), "first");
  EXPECT_EQ(written.at("errors")[0].at("error"), "the driver refused");
  EXPECT_EQ(written.at("exit_status"), 1);
}

TEST(GpuCheckReport, AFailedResultSetsTheExitStatusWithoutAnError) {
  Report report;
  EXPECT_EQ(report.exit_status(), 0);
  report.fail();
  EXPECT_EQ(report.failures(), 1);
  EXPECT_EQ(report.errors(), 0);
  EXPECT_EQ(report.exit_status(), 1);
}

TEST(GpuCheckSummary, TakesTheWorstCaseOfEachFigureAgainstItsTarget) {
  Runtime rt;
  Report report;
  Context ctx(Options{}, rt, report);
  Json& doc = report.doc;
  doc["correctness"] = {{"pass", true},
                        {"cases", Json::array({{{"stages", Json::array({{{"identical", true}, {"pass", true}},
                                                                         {{"identical", false}, {"pass", true}}})}}})}};
  doc["launch"]["stages"] = Json::array({{{"kiln_minus_raw_launch_us", 0.1}, {"kiln_minus_raw_cooperative_us", 0.05}},
                                         {{"kiln_minus_raw_launch_us", 0.5}, {"kiln_minus_raw_cooperative_us", 0.2}},
                                         {{"kiln_us", 4.0}}});  // one launched by kiln only
  doc["bandwidth"]["stages"] = Json::array({{{"neighbour_tables", false}, {"percent_of_copy", 85.0}},
                                            {{"neighbour_tables", false}, {"percent_of_copy", 91.0}},
                                            {{"neighbour_tables", true}, {"percent_of_copy", 30.0}},
                                            {{"error", "no memory"}}});
  summarise(ctx);
  const Json& s = doc.at("summary");
  EXPECT_EQ(s.at("correctness_stages"), 2);
  EXPECT_EQ(s.at("correctness_identical"), 1);
  EXPECT_EQ(s.at("launch_kiln_minus_raw_us_worst"), 0.5);
  EXPECT_EQ(s.at("launch_kiln_minus_raw_cooperative_us_worst"), 0.2);
  EXPECT_EQ(s.at("launch_target_met"), false);
  EXPECT_EQ(s.at("bandwidth_point_wise_percent_worst"), 85.0);
  EXPECT_EQ(s.at("bandwidth_target_met"), true);
  EXPECT_FALSE(s.contains("warm_start_ratio"));  // that check did not run
}

}  // namespace
}  // namespace kiln::gpu_check
