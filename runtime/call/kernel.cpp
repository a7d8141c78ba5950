// kiln::Kernel's out-of-line half: the checked call (timing, and the errors
// that name what is wrong). The fast path is inline in kiln/kernel.hpp.
#include <array>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/log.hpp"
#include "kiln/errors.hpp"
#include "kiln/kernel.hpp"
#include "runtime/call/argument_errors.hpp"
#include "runtime/call/check_report.hpp"
#include "runtime/call/extents.hpp"
#include "runtime/call/resolved_kernel.hpp"
#include "runtime/call/threads.hpp"

namespace kiln {
namespace {

// The points of a call's work: the product of its domain's ranges (the
// sizes that `contain` a range, `#pragma kiln size cells contains start
// end`), else, for a kernel that declares none, its largest array's elements.
std::int64_t call_points(const detail::ResolvedKernel& k, const kiln_arg* const* args, std::size_t count) {
  std::int64_t domain = 1;
  bool declared = false;
  for (const auto& size : k.info->sizes) {
    if (!size.start || !size.end) continue;
    const std::int64_t start = k.params[*size.start].i64, end = k.params[*size.end].i64;
    if (end <= start) return 0;
    if (__builtin_mul_overflow(domain, end - start, &domain)) return INT64_MAX;
    declared = true;
  }
  if (declared) return domain;
  std::int64_t largest = 0;
  for (std::size_t i = 0; i < count; ++i) {
    std::int64_t elements = args[i]->rank > 0 ? 1 : 0;
    for (int d = 0; d < args[i]->rank && d < 4; ++d)
      if (args[i]->shape[d] <= 0 || __builtin_mul_overflow(elements, args[i]->shape[d], &elements)) elements = 0;
    largest = elements > largest ? elements : largest;
  }
  return largest;
}

// Says once per kernel that its calls ignore the threads they were given.
void runs_alone(const lang::KernelInfo& info) {
  static std::mutex mutex;
  static std::set<std::string, std::less<>> told;  // by name: a KernelInfo's address may be reused
  std::lock_guard lock(mutex);
  if (!told.insert(info.name).second) return;
  base::log().warn("kernel '{}' runs on one thread whatever the thread count: in {}, {} (docs/manual/threads.md, "
                   "\"Which kernels split\")", info.name, info.file_name, info.single_thread_why);
}

// The threads a call runs on: one in check mode (a violation stops its
// thread, the others would wait at the next barrier for ever: resolve.cpp),
// one for a kernel whose body does not split its work through the prelude's
// helpers (KernelInfo::splits: every thread would run the whole body), else
// the `threads` run_on() asks for, or of the configured ones (Config::threads,
// KILN_THREADS, OMP_NUM_THREADS) one per kPointsPerThread points of work.
int call_threads(const detail::ResolvedKernel& k, const kiln_arg* const* args, std::size_t count, int threads) {
  const bool configured = threads == 0;
  if (configured) threads = k.call.threads;
  if (threads > runtime::kMaxThreads)
    throw Error("kiln: kernel '" + k.info->name + "': " +
                (configured ? "Config::threads is " + std::to_string(threads)
                            : "run_on(" + std::to_string(threads) + ")") +
                ": a call runs on at most " + std::to_string(runtime::kMaxThreads) + " threads (as KILN_THREADS)");
  if (threads <= 1 || k.check) return 1;
  if (!k.info->splits) {
    runs_alone(*k.info);
    return 1;
  }
  return configured ? runtime::threads_for_work(threads, call_points(k, args, count)) : threads;
}

}  // namespace

void Kernel::invoke_checked(const kiln_arg* const* args, std::size_t count, int threads) const {
  if (!block_) throw Error("kiln: call of an empty Kernel handle");
  const detail::ResolvedKernel& k = *block_->owner;
  if (count != k.signature.size()) runtime::bad_count(*k.info, count);
  for (std::size_t i = 0; i < count; ++i)
    if (detail::signature_of(*args[i]) != k.signature[i]) runtime::bad_arg(*k.info, i, *args[i], k.nproma[i]);
  // The entry takes the temporaries after the arguments, then in check mode
  // its report; a status names an argument, never a temporary (kiln laid
  // those out as the entry expects).
  std::optional<runtime::Temporaries::Lease> lease;
  if (k.temporaries) lease.emplace(k.temporaries->lease(args, count));
  const kiln_arg* const* passed = lease ? lease->args() : args;
  const std::size_t n_passed = count + k.info->temporaries.size();
  runtime::CheckReport report{};
  kiln_arg report_arg{};
  std::vector<const kiln_arg*> with_report;
  if (k.check) {
    report_arg.data = &report;
    with_report.assign(passed, passed + n_passed);
    with_report.push_back(&report_arg);
    passed = with_report.data();
  }
  threads = call_threads(k, args, count, threads);
  // Read once: tiered start may replace it between calls (kiln/kernel.hpp).
  const detail::EntryFn entry = detail::entry_of(k.call);
  int status;
  if (!k.metrics) {
    status = runtime::run_on_threads(entry, passed, k.call.params, threads);
  } else {
    const auto start = std::chrono::steady_clock::now();
    status = runtime::run_on_threads(entry, passed, k.call.params, threads);
    const double ms = runtime::ms_since(start);
    // A tiered kernel's calls of its generic build are the generic build's.
    const bool generic = entry == k.generic_entry;
    const std::string& name = generic ? k.generic_metrics_name : k.metrics_name;
    const bool first = !(generic ? k.generic_called : k.called).exchange(true);
    k.metrics->record(name, first ? "first_call" : "run", ms);
    if (first) k.metrics->note_first_call(name, start);
    k.metrics->note_threads(name, runtime::threads_here(threads));
  }
  if (status == runtime::kCheckStatus) runtime::check_failed(*k.info, passed, n_passed, report);
  if (status != 0) refused(args, status);
}

void Kernel::refused(const kiln_arg* const* args, int status) const {
  const detail::ResolvedKernel& k = *block_->owner;
  if (status == runtime::kExtentStatus) {
    runtime::check_extents(*k.info, args, k.nproma, k.params.data());  // throws what is wrong
    throw Error("kiln: kernel '" + k.info->name + "' refused its arguments' extents, which kiln's checker accepts "
                "(a defect of kiln: please report it)");
  }
  const std::size_t index = static_cast<std::size_t>(status - 1);
  runtime::bad_strides(*k.info, index, *args[index], k.strides[index], k.nproma[index], k.nblks[index]);
}

// The pointers on the stack for the argument counts kernels have: a vector
// here was a heap allocation per call (~20 ns of a C or Fortran call).
void Kernel::invoke(std::span<const kiln_arg> args) const {
  constexpr std::size_t kOnStack = 32;
  std::array<const kiln_arg*, kOnStack> on_stack;
  std::vector<const kiln_arg*> on_heap;
  const kiln_arg** pointers = on_stack.data();
  // A count no kernel takes (kiln_call's SIZE_MAX) is refused by name before
  // any pointer array is made for it (that failed as an internal error).
  if (block_ != nullptr && args.size() != block_->count) return invoke_checked(nullptr, args.size());
  if (args.size() > kOnStack) {
    on_heap.resize(args.size());
    pointers = on_heap.data();
  }
  for (std::size_t i = 0; i < args.size(); ++i) pointers[i] = &args[i];
  invoke(pointers, args.size());
}

const std::string& Kernel::name() const { return block_->owner->info->name; }
bool Kernel::specialised() const { return block_->owner->specialised; }
std::string Kernel::key() const { return block_->owner->key.hex(); }

}  // namespace kiln
