// The resolution loop's shared part (runtime/resolve/pipeline.hpp): jobs
// grouped by key, publishing in request order with repeats marked, the
// "specialise" time of each published job, and which error is thrown.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "runtime/resolve/pipeline.hpp"

namespace kiln::runtime {
namespace {

Job job(std::uint64_t key, const std::string& name) {
  Job out;
  out.key.high = key;
  out.key.low = ~key;
  out.metrics_name = name;
  out.specialise_ms = 1.5;
  return out;
}

// What publish saw, per call.
struct Published {
  std::string name;
  bool repeat;
  std::size_t request;
};

TEST(Pipeline, JobsOfOneKeyShareItsOutcomeAndKeepTheirRequests) {
  Resolution r;
  r.add(job(1, "a"), 4);
  r.add(job(2, "b"), 5);
  r.add(job(1, "a again"), 7);
  ASSERT_EQ(r.keys(), 2u);
  EXPECT_EQ(r.outcomes.size(), 2u);
  EXPECT_EQ((std::vector<std::size_t>{0, 1, 0}), r.key_of);
  EXPECT_EQ((std::vector<std::size_t>{4, 5, 7}), r.request);
  EXPECT_EQ(r.first_job(0).metrics_name, "a");
  EXPECT_EQ(r.first_job(1).metrics_name, "b");
  EXPECT_EQ(r.index.at(r.jobs[2].key), 0u);
}

TEST(Pipeline, ObtainsEachKeyOnceAndPublishesEveryJobInOrderWithRepeatsMarked) {
  Resolution r;
  r.add(job(1, "a"), 0);
  r.add(job(1, "a"), 1);
  r.add(job(2, "b"), 2);
  Metrics metrics;
  std::vector<std::size_t> obtained;
  std::vector<Published> published;
  run(r,
      {.obtain =
           [&](Resolution& res) {
             for (std::size_t k = 0; k < res.keys(); ++k) {
               obtained.push_back(k);
               res.outcomes[k].how = Obtained::built;
             }
           },
       .publish = [&](Job& j, const Outcome& o, bool repeat, std::size_t request) {
         EXPECT_EQ(o.how, Obtained::built);
         published.push_back({j.metrics_name, repeat, request});
       }},
      metrics);
  EXPECT_EQ((std::vector<std::size_t>{0, 1}), obtained);
  ASSERT_EQ(published.size(), 3u);
  EXPECT_FALSE(published[0].repeat);
  EXPECT_TRUE(published[1].repeat);  // the second request of key 1: from memory
  EXPECT_FALSE(published[2].repeat);
  EXPECT_EQ(published[2].request, 2u);
  const MetricsSnapshot snapshot = metrics.snapshot();
  EXPECT_EQ(snapshot.kernels.at("a").phases.at("specialise").count, 2u);
  EXPECT_EQ(snapshot.kernels.at("b").phases.at("specialise").count, 1u);
}

TEST(Pipeline, AFailedKeyFailsOnlyItsJobsAndItsErrorIsThrownAfterTheOthersArePublished) {
  Resolution r;
  r.add(job(1, "good"), 0);
  r.add(job(2, "bad"), 1);
  r.add(job(2, "bad"), 2);
  Metrics metrics;
  std::vector<std::size_t> published;
  const Steps steps{.obtain =
                        [](Resolution& res) {
                          res.outcomes[0].how = Obtained::loaded;
                          res.outcomes[1].error = std::make_exception_ptr(std::runtime_error("key 2 failed"));
                        },
                    .publish = [&](Job&, const Outcome&, bool, std::size_t request) { published.push_back(request); }};
  EXPECT_THROW(
      {
        try {
          run(r, steps, metrics);
        } catch (const std::runtime_error& e) {
          EXPECT_STREQ(e.what(), "key 2 failed");
          throw;
        }
      },
      std::runtime_error);
  EXPECT_EQ((std::vector<std::size_t>{0}), published);
  EXPECT_EQ(metrics.snapshot().kernels.count("bad"), 0u);  // not published: no specialise time
}

TEST(Pipeline, ARequestThatDidNotPrepareIsThrownBeforeAnyKeysError) {
  Resolution r;
  r.error = std::make_exception_ptr(std::invalid_argument("request 0 did not prepare"));
  r.add(job(1, "fails too"), 1);
  r.add(job(2, "good"), 2);
  Metrics metrics;
  std::vector<std::size_t> published;
  const Steps steps{.obtain =
                        [](Resolution& res) {
                          res.outcomes[0].error = std::make_exception_ptr(std::runtime_error("key 1 failed"));
                          res.outcomes[1].how = Obtained::linked;
                        },
                    .publish = [&](Job&, const Outcome&, bool, std::size_t request) { published.push_back(request); }};
  EXPECT_THROW(run(r, steps, metrics), std::invalid_argument);
  EXPECT_EQ((std::vector<std::size_t>{2}), published);
}

TEST(Pipeline, AnObtainStepThatThrowsEndsTheResolutionWithNothingPublished) {
  Resolution r;
  r.add(job(1, "a"), 0);
  Metrics metrics;
  bool published = false;
  const Steps steps{.obtain = [](Resolution&) { throw std::runtime_error("member 1: no such kernel"); },
                    .publish = [&](Job&, const Outcome&, bool, std::size_t) { published = true; }};
  EXPECT_THROW(run(r, steps, metrics), std::runtime_error);
  EXPECT_FALSE(published);
}

}  // namespace
}  // namespace kiln::runtime
