#include "runtime/resolve/pipeline.hpp"

#include <utility>

namespace kiln::runtime {

void Resolution::add(Job job, std::size_t request_index) {
  const auto [it, fresh] = index.emplace(job.key, first.size());
  if (fresh) {
    first.push_back(jobs.size());
    outcomes.emplace_back();
  }
  key_of.push_back(it->second);
  request.push_back(request_index);
  jobs.push_back(std::move(job));
}

void run(Resolution& resolution, const Steps& steps, Metrics& metrics) {
  steps.obtain(resolution);
  std::exception_ptr first_error = resolution.error;
  for (std::size_t j = 0; j < resolution.jobs.size(); ++j) {
    const std::size_t key = resolution.key_of[j];
    const Outcome& outcome = resolution.outcomes[key];
    if (outcome.error) {
      if (!first_error) first_error = outcome.error;
      continue;
    }
    Job& job = resolution.jobs[j];
    metrics.record(job.metrics_name, "specialise", job.specialise_ms);
    steps.publish(job, outcome, resolution.first[key] != j, resolution.request[j]);
  }
  if (first_error) std::rethrow_exception(first_error);
}

}  // namespace kiln::runtime
