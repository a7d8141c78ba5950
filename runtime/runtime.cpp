// kiln::Runtime: resolves (kernel, specialisation) to a callable handle
// through three levels: this process's memory, the on-disk cache, the compiler
// (resolve.cpp below the memory table, batch.cpp for many at once).
#include "kiln/runtime.hpp"

#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <thread>

#include <spdlog/spdlog.h>

#include "base/log.hpp"
#include "cache/eviction.hpp"
#include "cache/file_system_kind.hpp"
#include "cache/index_journal.hpp"
#include "kiln/errors.hpp"
#include "runtime/runtime_impl.hpp"

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

// A tier whose folder is not trusted (another user's, or writable by others)
// is refused with an error naming it and the cause, and the run goes on
// without it: whoever can write a cache can run code in this process.
Runtime::Impl::Impl(Config c) : config(std::move(c)) {
  // 0: the hardware's threads, at most 8 (compiling is memory-hungry).
  if (config.build_threads == 0) config.build_threads = std::min(usable_cpus(), 8u);
  slots.emplace(config.build_slots, config.build_slot_dir);
  if (!config.use_disk_cache) return;
  const auto refused = [](const cache::DiskStore& tier) { return !tier.refusal().empty(); };  // the store said why
  for (const std::filesystem::path& dir : config.read_only_tiers) {
    cache::DiskStore tier(dir, {.read_only = true, .trusted_dirs = config.trusted_dirs});
    if (!refused(tier)) read_only_tiers.push_back(std::move(tier));
  }
  store.emplace(config.cache_dir, cache::StoreOptions{.read_only = false, .trusted_dirs = config.trusted_dirs});
  if (refused(*store)) store.reset();
}

// At the end of a run that stored entries: temporaries of killed writers go,
// and with KILN_CACHE_MAX_SIZE the least recently used entries (by the
// index's last use, else by when they were stored) until the folder fits.
void Runtime::Impl::tidy_cache() {
  store->sweep_temporaries(cache::kOrphanedTemporaryAge);
  if (config.cache_max_size == 0) return;
  cache::Index* idx = open_index();
  cache::LastUsed last_used;
  if (idx)
    for (const cache::IndexRecord& r : idx->list())
      last_used.emplace(r.key, std::chrono::sys_seconds(std::chrono::seconds(r.last_used)));
  const cache::GcResult gc = cache::gc(*store, config.cache_max_size, last_used);
  if (idx)
    for (const cache::Key& key : gc.removed_keys) idx->remove(key);
  if (gc.removed > 0)
    base::log().info("kiln cache: removed {} least recently used entries ({} bytes) to fit in {} bytes", gc.removed,
                 gc.bytes_freed, config.cache_max_size);
}

// The index's journal (cache/index_journal.hpp): a warm process never opens
// the index, nor does a compile. None where the index is off
// (KILN_INDEX_PATH=off, or a network file system, where nothing would ever
// fold the journal in).
std::optional<std::filesystem::path> Runtime::Impl::journal() const {
  if (!store || config.index_path == "off") return std::nullopt;
  const std::filesystem::path path = index_path();
  if (!cache::network_file_system_name(path.parent_path()).empty()) return std::nullopt;
  return cache::journal_path(path);
}

// Past its fold size, the journal is folded in here (opening the index does).
void Runtime::Impl::after_append(std::uint64_t journal_size) {
  if (journal_size > cache::kJournalFoldSize) open_index();
}

void Runtime::Impl::note_disk_hits() {
  if (disk_hits.empty()) return;
  if (const auto path = journal()) after_append(cache::append_hits(*path, disk_hits));
}

MetricsSnapshot Runtime::Impl::snapshot() {
  MetricsSnapshot out = metrics.snapshot();
  std::lock_guard lock(mutex);
  for (const auto& [_, k] : memory)
    out.kernels[k->metrics_name].memory_hits += k->memory_hits.load(std::memory_order_relaxed);
  return out;
}

void Runtime::Impl::finish() {
  note_disk_hits();
  if (stored_entries) tidy_cache();
  if (!config.print_metrics && config.metrics_file.empty()) return;  // nobody reads it
  const MetricsSnapshot snapshot = this->snapshot();
  // stdio, not <iostream>: including it makes every process that loads
  // libkiln construct the standard streams at start-up (~50 µs measured).
  if (config.print_metrics) std::fprintf(stderr, "kiln: init vs run\n%s", snapshot.table().c_str());
  if (!config.metrics_file.empty()) {
    std::ofstream file(config.metrics_file);
    file << snapshot.json() << '\n';
    if (!file) base::log().error("cannot write metrics to {}", config.metrics_file.string());
  }
}

Runtime::Runtime() : Runtime(Config::from_env()) {}

Runtime::Runtime(Config config) {
  set_log_level(config.log_level);
  impl_ = std::make_unique<Impl>(std::move(config));
}

Runtime::~Runtime() {
  try {
    impl_->finish();
  } catch (const std::exception& e) {
    base::log().error("while ending the runtime: {}", e.what());
  }
}

Kernel Runtime::kernel(std::string_view name, const Spec& spec, Mode mode) {
  const auto start = Clock::now();
  {
    std::lock_guard lock(impl_->mutex);
    auto it = impl_->memory.find(runtime::MemoryKeyView{name, mode, spec.canonical(), spec.hash()});
    if (it != impl_->memory.end()) {
      // The hot path of a repeated lookup: one relaxed increment, a clock read only when timing.
      const detail::ResolvedKernel& k = *it->second;
      k.memory_hits.fetch_add(1, std::memory_order_relaxed);
      if (impl_->config.time_calls) impl_->metrics.record(k.metrics_name, "memory_lookup", ms_since(start));
      return Kernel(&k.call);
    }
  }
  const double lookup_ms = ms_since(start);
  Job job = impl_->prepare(name, spec, mode);
  detail::EntryFn entry = nullptr;
  const Obtained how = impl_->obtain(job, impl_->config.lock_timeout, entry);
  const detail::ResolvedKernel& k = impl_->publish(job, entry, how == Obtained::linked);
  impl_->metrics.record(k.metrics_name, "memory_lookup", lookup_ms);
  return Kernel(&k.call);
}

std::string Runtime::register_kernel(std::string_view source, std::string_view file_name) {
  return impl_->registry.add(source, file_name).name;
}

std::string Runtime::register_kernel_file(const std::filesystem::path& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw KernelSourceError("kiln: cannot read kernel file " + path.string());
  std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  return register_kernel(text, path.filename().string());
}

std::vector<std::string> Runtime::kernel_names() const { return impl_->registry.names(); }

// The parser's declarations copied out: KernelInfo is internal to the runtime.
KernelDeclaration Runtime::declaration(std::string_view name) const {
  const runtime::KernelInfo& info = impl_->registry.get(name);
  KernelDeclaration out{info.name, {}, {}};
  for (const runtime::ArgDecl& arg : info.args) out.arguments.push_back({arg.name, arg.type, arg.rank});
  for (const runtime::ParamDecl& param : info.params)
    out.parameters.push_back({param.name, param.type, param.kind == runtime::ParamKind::domain});
  return out;
}

const Config& Runtime::config() const { return impl_->config; }
MetricsSnapshot Runtime::metrics() const { return impl_->snapshot(); }

}  // namespace kiln
