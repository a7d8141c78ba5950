// kiln::Runtime: resolves (kernel, specialisation) to a callable handle
// through three levels: this process's memory, the on-disk cache, the build
// path. A memory hit is answered here; a miss goes the resolution loop
// (pipeline.hpp), which batch.cpp and the others share.
#include "kiln/runtime.hpp"

#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <thread>

#include <spdlog/spdlog.h>

#include "base/log.hpp"
#include "kiln/errors.hpp"
#include "runtime/metrics/metrics_file.hpp"
#include "runtime/resolve/runtime_impl.hpp"

namespace kiln {

using Clock = std::chrono::steady_clock;
using runtime::ms_since;

namespace {

// The level of kiln's logger, made or yet to be made (base/log.hpp): it
// is made on its first message, which a warm run never writes.
void set_log_level(const std::string& level_name) {
  const auto level = spdlog::level::from_str(level_name);
  if (level == spdlog::level::off && level_name != "off")
    throw Error("kiln: KILN_LOG_LEVEL='" + level_name + "': expected trace, debug, info, warn, error, critical or off");
  spdlog::set_level(level);
}

// The CPUs this process may run on: an MPI rank bound to two cores gets two
// build threads, not one per core of the node. One system call, where
// std::thread::hardware_concurrency() reads sysfs (~20 µs of a warm process).
unsigned usable_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return static_cast<unsigned>(CPU_COUNT(&set));
  return std::max(std::thread::hardware_concurrency(), 1u);
}

}  // namespace

Runtime::Impl::Impl(Config c)
    : config_(std::move(c)),
      compiler_(config_),
      cache_(config_, metrics_),
      builder_(config_, cache_, compiler_, metrics_) {
  // 0: the hardware's threads, at most 8 (compiling is memory-hungry).
  if (config_.build_threads == 0) config_.build_threads = std::min(usable_cpus(), 8u);
}

MetricsSnapshot Runtime::Impl::snapshot() {
  MetricsSnapshot out = metrics_.snapshot();
  memory_.for_each([&](const detail::ResolvedKernel& k) { out.kernels[k.metrics_name].memory_hits += k.memory_hits.total(); });
  return out;
}

void Runtime::Impl::finish() {
  cache_.finish();
  if (!config_.print_metrics && config_.metrics_file.empty()) return;  // nobody reads it
  const MetricsSnapshot snapshot = this->snapshot();
  // stdio, not <iostream>: including it makes every process that loads
  // libkiln construct the standard streams at start-up (~50 µs measured).
  if (config_.print_metrics) std::fprintf(stderr, "kiln: init vs run\n%s", snapshot.table().c_str());
  if (!config_.metrics_file.empty()) runtime::write_metrics_file(config_.metrics_file, snapshot.json() + '\n');
}

Runtime::Runtime() : Runtime(Config::from_env()) {}

Runtime::Runtime(Config config) {
  // A Config set in code is held to the bounds its KILN_* variables have, here
  // rather than at the first compile or call that would misread it.
  config.validate();
  set_log_level(config.log_level);
  impl_ = std::make_unique<Impl>(std::move(config));
}

Runtime::~Runtime() {
  try {
    impl_->tiered().stop();  // before the cache is tidied: a build running may still store
    impl_->finish();
  } catch (const std::exception& e) {
    base::log().error("while ending the runtime: {}", e.what());
  }
}

Kernel Runtime::kernel(std::string_view name, const Spec& spec, Mode mode) {
  const runtime::MemoryKeyView key{name, mode, spec.canonical(), spec.hash()};
  // The hot path of a repeated lookup: no lock, one increment of this
  // thread's own counter, and no clock read unless calls are timed (a clock
  // read was ~1/5 of a hit).
  if (!impl_->config().time_calls) {
    if (const detail::ResolvedKernel* k = impl_->memory().find(key)) {
      k->memory_hits.add();
      return Kernel(&k->call);
    }
  }
  // Timed, or a miss (whose lookup is timed here, once more: it costs ~40 ns).
  const auto start = Clock::now();
  if (const detail::ResolvedKernel* k = impl_->memory().find(key)) {
    k->memory_hits.add();
    impl_->metrics().record(k->metrics_name, "memory_lookup", ms_since(start));
    return Kernel(&k->call);
  }
  const double lookup_ms = ms_since(start);
  const detail::ResolvedKernel& k = impl_->resolve_one(name, spec, mode);
  impl_->metrics().record(k.metrics_name, "memory_lookup", lookup_ms);
  return Kernel(&k.call);
}

const detail::ResolvedKernel& Runtime::Impl::resolve_one(std::string_view name, const Spec& spec, Mode mode) {
  runtime::Resolution one;
  one.add(prepare(name, spec, mode), 0);
  const bool tiered = config_.tiered && one.jobs.front().specialised();
  const detail::ResolvedKernel* k = nullptr;
  const auto obtain = [&](runtime::Resolution& r) { tiered ? obtain_tiered(r) : obtain_waiting(r); };
  const auto publish = [&](runtime::Job& job, const runtime::Outcome& outcome, bool repeat, std::size_t) {
    k = &this->publish(job, outcome, repeat);
  };
  runtime::run(one, {.obtain = obtain, .publish = publish}, metrics_);
  return *k;
}

namespace {

// A new text under a registered name replaces it for later requests: the
// memory table forgets the name's resolved kernels (their handles keep them).
// A template: Runtime::Impl is private to Runtime, and this need not name it.
template <class Impl>
std::string add_kernel(Impl& impl, std::string_view source, std::string_view file_name, std::string_view path) {
  bool replaced = false;
  const std::string name = impl.registry().add(source, file_name, path, &replaced).name;
  if (replaced) impl.memory().forget(name);
  return name;
}

}  // namespace

std::string Runtime::register_kernel(std::string_view source, std::string_view file_name) {
  return add_kernel(*impl_, source, file_name, {});
}

std::string Runtime::register_kernel_file(const std::filesystem::path& path) {
  // A folder opens as a stream and fails at the first read with libstdc++'s
  // "basic_filebuf::underflow": say what it is instead.
  std::error_code kind;
  if (std::filesystem::is_directory(path, kind))
    throw KernelSourceError("kiln: kernel file " + path.string() + " is a folder, not a kernel file");
  std::ifstream file(path, std::ios::binary);
  if (!file) throw KernelSourceError("kiln: cannot read kernel file " + path.string());
  std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  // Absolute, so that a manifest of the cache names the file wherever it is read.
  std::error_code error;
  const std::filesystem::path absolute = std::filesystem::absolute(path, error).lexically_normal();
  return add_kernel(*impl_, text, path.filename().string(), error ? path.string() : absolute.string());
}

std::vector<std::string> Runtime::kernel_names() const { return impl_->registry().names(); }

// The parser's declarations copied out: KernelInfo is internal to the runtime.
KernelDeclaration Runtime::declaration(std::string_view name) const {
  const lang::KernelInfo& info = impl_->registry().get(name);
  KernelDeclaration out{info.name, {}, {}, info.path, info.source_digest};
  for (const lang::ArgDecl& arg : info.args) out.arguments.push_back({arg.name, arg.type, arg.rank});
  for (const lang::ParamDecl& param : info.params)
    out.parameters.push_back({param.name, param.type, param.kind == lang::ParamKind::domain});
  return out;
}

void Runtime::wait_for_specialised() { impl_->tiered().wait_idle(); }

const Config& Runtime::config() const { return impl_->config(); }
MetricsSnapshot Runtime::metrics() const { return impl_->snapshot(); }

}  // namespace kiln
