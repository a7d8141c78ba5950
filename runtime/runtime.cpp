// kiln::Runtime: resolves (kernel, specialisation) to a callable handle
// through three levels: this process's memory, the on-disk cache, the compiler.
#include "kiln/runtime.hpp"

#include <chrono>
#include <fstream>
#include <iostream>
#include <mutex>
#include <optional>
#include <unordered_map>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "cache/build_lock.hpp"
#include "cache/disk_store.hpp"
#include "cache/index.hpp"
#include "kernels_src/embedded_sources.hpp"
#include "kiln/errors.hpp"
#include "runtime/bound_spec.hpp"
#include "runtime/cache_key.hpp"
#include "runtime/codegen.hpp"
#include "runtime/memory_table.hpp"
#include "runtime/metrics.hpp"
#include "runtime/registry.hpp"
#include "runtime/resolved_kernel.hpp"
#include "runtime/toolchain.hpp"

namespace kiln {

using Clock = std::chrono::steady_clock;
using runtime::ms_since;

struct Runtime::Impl {
  Config config;
  runtime::Registry registry;
  runtime::Metrics metrics;
  runtime::Toolchain toolchain;
  std::optional<cache::DiskStore> store;
  std::unique_ptr<cache::Index> index;  // opened on first use

  // Resolution is serialised: one process compiles a key once (per-key
  // concurrency comes with the parallel-build work).
  std::mutex mutex;
  runtime::MemoryTable memory;
  // Binaries linked in this process, by key: a generic build serves every
  // specialisation, and is linked once.
  std::unordered_map<cache::Key, detail::EntryFn, cache::KeyHash> linked;
  std::vector<cache::Key> disk_hits;  // noted in the index when the runtime ends
  bool store_warning_given = false;
  bool lock_warning_given = false;

  explicit Impl(Config c) : config(std::move(c)) {
    if (config.use_disk_cache) store.emplace(config.cache_dir);
  }

  cache::Index* open_index();
  cache::BuildLock take_build_lock(const cache::Key& key, const std::string& metrics_name);
  const detail::ResolvedKernel& resolve(std::string_view name, const Spec& spec, Mode mode);
  std::optional<detail::EntryFn> load_from_disk(const cache::Key& key, const std::string& symbol,
                                                const std::string& metrics_name);
  detail::EntryFn compile_and_store(const runtime::KernelInfo& info, const std::string& source,
                                    const cache::Key& key, const std::string& symbol, const std::string& metrics_name,
                                    const std::string& spec_json);
  MetricsSnapshot snapshot();
  void finish();
};

namespace {

void set_up_logging(const std::string& level_name) {
  auto logger = spdlog::get("kiln");
  if (!logger) {
    try {
      logger = spdlog::stderr_color_mt("kiln");
    } catch (const spdlog::spdlog_ex&) {
      logger = spdlog::get("kiln");  // another thread made it first
    }
  }
  const auto level = spdlog::level::from_str(level_name);
  if (level == spdlog::level::off && level_name != "off")
    throw Error("kiln: KILN_LOG_LEVEL='" + level_name + "': expected trace, debug, info, warn, error, critical or off");
  logger->set_level(level);
}

}  // namespace

// Without the lock (timed out, or a file system without locks) this process
// compiles on its own and publishes by rename: the same bytes as any other
// writer's, so whichever rename lands last is right. Said once per runtime.
cache::BuildLock Runtime::Impl::take_build_lock(const cache::Key& key, const std::string& metrics_name) {
  const auto start = Clock::now();
  cache::BuildLock lock = cache::BuildLock::acquire(store->lock_path(key), config.lock_timeout);
  metrics.record(metrics_name, "lock_wait", ms_since(start));
  if (!lock.held() && !lock_warning_given) {
    spdlog::get("kiln")->warn("kiln cache: compiling {} without the build lock ({})", metrics_name, lock.problem());
    lock_warning_given = true;
  }
  return lock;
}

cache::Index* Runtime::Impl::open_index() {
  if (!config.use_disk_cache || config.index_path == "off") return nullptr;
  if (!index) index = std::make_unique<cache::Index>(config.index_path.empty() ? config.cache_dir / "index.sqlite"
                                                                               : config.index_path);
  return index->usable() ? index.get() : nullptr;
}

std::optional<detail::EntryFn> Runtime::Impl::load_from_disk(const cache::Key& key, const std::string& symbol,
                                                             const std::string& metrics_name) {
  auto start = Clock::now();
  cache::LookupResult found = store->get(key);
  metrics.record(metrics_name, "disk_lookup", ms_since(start));
  if (!found.payload) return std::nullopt;  // a rejected entry was logged by the store; it is rebuilt below
  start = Clock::now();
  try {
    void* address = toolchain.link(*found.payload, symbol, metrics_name);
    metrics.record(metrics_name, "load", ms_since(start));
    metrics.count_disk_hit(metrics_name);
    disk_hits.push_back(key);
    return reinterpret_cast<detail::EntryFn>(address);
  } catch (const std::exception& e) {
    // A checksummed entry that does not link was written by something else:
    // never run it, rebuild it.
    spdlog::get("kiln")->warn("cache entry {} does not link ({}); compiling again", key.hex(), e.what());
    return std::nullopt;
  }
}

detail::EntryFn Runtime::Impl::compile_and_store(const runtime::KernelInfo& info, const std::string& source,
                                                 const cache::Key& key, const std::string& symbol,
                                                 const std::string& metrics_name,
                                                 const std::string& spec_json) {
  auto start = Clock::now();
  jit::CompileOutput out = toolchain.compile(source, info.file_name);
  const double compile_ms = ms_since(start);
  metrics.record(metrics_name, "compile", compile_ms);
  if (!out.ok) throw CompileError(info.name, out.diagnostics);
  metrics.count_compile(metrics_name);

  if (store) {
    start = Clock::now();
    cache::PutResult put = store->put(key, out.object);
    metrics.record(metrics_name, "store", ms_since(start));
    if (!put.ok && !store_warning_given) {
      spdlog::get("kiln")->warn("cannot store in the kernel cache ({}); going on with in-memory kernels", put.error);
      store_warning_given = true;
    }
    if (put.ok)
      if (cache::Index* idx = open_index())
        idx->record({key, metrics_name, spec_json, "cpu", toolchain.target_description(), out.object.size(),
                     compile_ms});
  }
  start = Clock::now();
  void* address = toolchain.link(out.object, symbol, metrics_name);
  metrics.record(metrics_name, "load", ms_since(start));
  return reinterpret_cast<detail::EntryFn>(address);
}

const detail::ResolvedKernel& Runtime::Impl::resolve(std::string_view name, const Spec& spec, Mode mode) {
  const bool specialised = mode == Mode::specialised;
  auto start = Clock::now();
  const runtime::KernelInfo& info = registry.get(name);
  runtime::BoundSpec bound = runtime::bind_spec(info, spec);
  if (!specialised) bound.strides.assign(bound.strides.size(), std::nullopt);
  const std::string_view prelude = kernels_src::prelude().text;
  const std::string metrics_name = specialised ? info.name : info.name + " (generic)";
  double specialise_ms = ms_since(start);  // a miss adds generating the source

  // The key stands for the translation unit without generating it (see
  // codegen_identity()): only a miss generates source.
  start = Clock::now();
  const jit::HostTarget& target = toolchain.target();
  const cache::Key key = runtime::compute_key({.kernel_source = info.source,
                                               .prelude = prelude,
                                               .specialisation = specialised ? spec.canonical() : std::string(),
                                               .mode = specialised ? "specialised" : "generic",
                                               .backend = "cpu",
                                               .triple = target.triple,
                                               .cpu = target.cpu,
                                               .features = target.features,
                                               .toolchain = toolchain.fingerprint(),
                                               .flags = runtime::Toolchain::kOptLevel});
  const std::string symbol = "kiln_" + key.hex();
  metrics.record(metrics_name, "key", ms_since(start));

  std::optional<detail::EntryFn> entry;
  const auto already_linked = linked.find(key);
  const bool was_linked = already_linked != linked.end();
  if (was_linked) entry = already_linked->second;
  if (!entry && store) entry = load_from_disk(key, symbol, metrics_name);
  // A miss: compile under the key's build lock, unless the process that held
  // it published the entry meanwhile. Released once the entry is stored.
  std::optional<cache::BuildLock> lock;
  if (!entry && store) {
    lock.emplace(take_build_lock(key, metrics_name));
    if (lock->held()) entry = load_from_disk(key, symbol, metrics_name);
  }
  if (!entry) {
    start = Clock::now();
    const std::string source = runtime::generate_source(info, bound, specialised, prelude, symbol);
    specialise_ms += ms_since(start);
    entry = compile_and_store(info, source, key, symbol, metrics_name, specialised ? spec.to_json() : "{}");
  }
  lock.reset();
  linked.emplace(key, *entry);
  metrics.record(metrics_name, "specialise", specialise_ms);

  auto resolved = std::make_unique<detail::ResolvedKernel>();
  resolved->params = std::move(bound.values);
  resolved->info = &info;
  for (const runtime::ArgDecl& arg : info.args)
    resolved->signature.push_back(detail::signature_of(static_cast<std::int32_t>(arg.type), arg.rank));
  resolved->specialised = specialised;
  resolved->key = key;
  resolved->metrics_name = metrics_name;
  resolved->metrics = config.time_calls ? &metrics : nullptr;
  resolved->memory_hits = was_linked ? 1 : 0;  // the binary came from memory
  resolved->call = {.entry = *entry,
                    .params = resolved->params.data(),
                    .signature = resolved->signature.data(),
                    .count = resolved->signature.size(),
                    .timed = resolved->metrics != nullptr,
                    .owner = resolved.get()};
  runtime::MemoryKey memory_key{std::string(name), mode, spec.canonical(), spec.hash()};
  return *memory.emplace(std::move(memory_key), std::move(resolved)).first->second;
}

MetricsSnapshot Runtime::Impl::snapshot() {
  MetricsSnapshot out = metrics.snapshot();
  std::lock_guard lock(mutex);
  for (const auto& [_, k] : memory)
    out.kernels[k->metrics_name].memory_hits += k->memory_hits.load(std::memory_order_relaxed);
  return out;
}

void Runtime::Impl::finish() {
  if (!disk_hits.empty())
    if (cache::Index* idx = open_index()) idx->note_hits(disk_hits);
  const MetricsSnapshot snapshot = this->snapshot();
  if (config.print_metrics) std::cerr << "kiln: init vs run\n" << snapshot.table();
  if (!config.metrics_file.empty()) {
    std::ofstream file(config.metrics_file);
    file << snapshot.json() << '\n';
    if (!file) spdlog::get("kiln")->error("cannot write metrics to {}", config.metrics_file.string());
  }
}

Runtime::Runtime() : Runtime(Config::from_env()) {}

Runtime::Runtime(Config config) {
  set_up_logging(config.log_level);
  impl_ = std::make_unique<Impl>(std::move(config));
}

Runtime::~Runtime() {
  try {
    impl_->finish();
  } catch (const std::exception& e) {
    spdlog::get("kiln")->error("while ending the runtime: {}", e.what());
  }
}

Kernel Runtime::kernel(std::string_view name, const Spec& spec, Mode mode) {
  const auto start = Clock::now();
  std::lock_guard lock(impl_->mutex);
  auto it = impl_->memory.find(runtime::MemoryKeyView{name, mode, spec.canonical(), spec.hash()});
  if (it != impl_->memory.end()) {
    // The hot path of a repeated lookup: one relaxed increment, a clock read only when timing.
    const detail::ResolvedKernel& k = *it->second;
    k.memory_hits.fetch_add(1, std::memory_order_relaxed);
    if (impl_->config.time_calls) impl_->metrics.record(k.metrics_name, "memory_lookup", ms_since(start));
    return Kernel(&k.call);
  }
  const double lookup_ms = ms_since(start);
  const detail::ResolvedKernel& k = impl_->resolve(name, spec, mode);
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
