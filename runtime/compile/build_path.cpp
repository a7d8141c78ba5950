#include "runtime/compile/build_path.hpp"

#include "cache/build_lock.hpp"
#include "base/log.hpp"
#include "lang/prelude.hpp"
#include "kiln/errors.hpp"
#include "lang/codegen.hpp"
#include "runtime/config/compile_options.hpp"

namespace kiln::runtime {

using Clock = std::chrono::steady_clock;

BuildPath::BuildPath(const Config& config, CacheTiers& cache, CpuCompiler& compiler, Metrics& metrics)
    : config_(config),
      cache_(cache),
      compiler_(compiler),
      metrics_(metrics),
      slots_(config.build_slots, config.build_slot_dir) {}

Built BuildPath::build(Job& job, const BuildPolicy& policy, const std::function<bool()>& look_again) {
  Built out;
  // Released once the entry is stored.
  std::optional<cache::BuildLock> lock;
  std::string unlocked;  // why this build runs without the lock
  if (cache_.writable()) {
    const auto start = Clock::now();
    lock.emplace(cache::BuildLock::acquire(cache_.lock_path(job.key), policy.lock_wait));
    if (lock->outcome() == cache::BuildLock::Outcome::timed_out && policy.busy_when_locked) return out;
    // Apart: taking the lock (its file; on a new cache its shard folder, made
    // and its parent synced: 0.4-7.7 ms a kernel on ext4 here, which read as
    // a wait in one process alone) and waiting for a holder, recorded only
    // when there was one.
    const double waited_ms = std::chrono::duration<double, std::milli>(lock->waited()).count();
    metrics_.record(job.metrics_name, "lock", ms_since(start) - waited_ms);
    if (waited_ms > 0) metrics_.record(job.metrics_name, "lock_wait", waited_ms);
    if (lock->held()) {
      if (look_again()) {
        out.how = Built::How::found;
        return out;
      }
    } else {
      // Timed out, or a folder without locks: compile on our own and publish
      // by rename. Every writer writes the same bytes, so whichever rename
      // lands last is right.
      unlocked = lock->problem();
    }
  }
  // One at a time: a thread waiting here holds the key's lock, and a batch
  // thread that holds a slot only ever tries key locks, so no cycle.
  std::optional<BuildSlots::Slot> slot;
  if (!policy.slot_held) slot = take_slot(job, false);
  Compiled compiled = compile(job);
  cache::IndexRecord record{job.key,          job.metrics_name, job.spec.to_json(),  compiled.backend,
                            compiled.target,  compiled.binary.size(), compiled.compile_ms};
  if (job.info->user) {  // a manifest names the user's file and digest (kiln warm)
    record.kernel_file = job.info->path;
    record.kernel_digest = job.info->source_digest;
  }
  out.stored = cache_.store(record, recipe(job, compiled), compiled.binary);
  out.binary = std::move(compiled.binary);
  out.how = Built::How::built;
  // Said after the store: when the folder cannot be written at all, the
  // store's warning (the one that matters) comes first, and this one not at all.
  if (!unlocked.empty())
    cache_.warn_once("kiln cache: compiled " + job.metrics_name + " without the build lock (" + unlocked + ")");
  return out;
}

std::string job_source(const Job& job, bool check) {
  const std::string_view prelude = lang::prelude();
  return job.gpu ? lang::generate_gpu_source(*job.info, job.bound, job.specialised(), prelude, job.symbol)
                 : lang::generate_source(*job.info, job.bound, job.specialised(), prelude, job.symbol, check);
}

BuildPath::Compiled BuildPath::compile(Job& job) {
  auto start = Clock::now();
  const std::string source = job_source(job, config_.check);
  job.specialise_ms += ms_since(start);

  Compiled out;
  if (job.gpu) {
    jit::GpuCompileOutput gpu = job.gpu->compile(source, job.info->file_name);
    metrics_.record(job.metrics_name, "compile", gpu.compile_ms);
    if (!gpu.ok) throw CompileError(job.info->name, gpu.log);
    out = {std::move(gpu.binary), gpu.compile_ms, job.gpu->backend, job.gpu->arch,
           job.gpu->toolchain + "; " + job.gpu->flags};
  } else {
    start = Clock::now();
    try {
      // In a worker process (cpu_compiler.hpp): a crash, an exhausted memory
      // limit or the time limit comes back as a failed output, and build()
      // lets go of the build lock and the slot as for any CompileError.
      jit::CompileOutput cpu = compiler_.compile(source, job.info->file_name,
                                                 {config_.compile_timeout, config_.compile_memory}, job.opt_level);
      const double compile_ms = ms_since(start);
      metrics_.record(job.metrics_name, "compile", compile_ms);
      if (!cpu.ok) throw CompileError(job.info->name, cpu.diagnostics);
      out = {std::move(cpu.binary), compile_ms, "cpu", compiler_.target_description(), compiler_.identity()};
    } catch (const ToolchainError& e) {
      throw ToolchainError(cannot_build(job, e.what()));
    }
  }
  metrics_.count_compile(job.metrics_name);
  return out;
}

// A miss that no compiler here can build: the kernel, and the cause. When
// the cache holds the kernel with these very values for another target, that
// is the likelier cause (a cache filled on another CPU, KILN_TARGET_CPU set
// there and not here, or the other way round), and it is said first.
std::string BuildPath::cannot_build(const Job& job, const std::string& cause) const {
  const std::string lead = "kiln: cannot build kernel '" + job.metrics_name + "' (not in the cache for this run's ";
  const bool native = config_.target_cpu.empty() || config_.target_cpu == "native";
  const std::string here = native ? std::string("target, this host's CPU (KILN_TARGET_CPU unset))")
                                  : "target, KILN_TARGET_CPU=" + config_.target_cpu + ")";
  const std::string named_here = compiler_.target().triple + " " + config_.target_cpu;
  std::string others;
  for (const cache::IndexRecord& record : cache_.records_of(job.metrics_name, job.spec.to_json())) {
    if (record.backend != "cpu" || record.target == named_here) continue;  // same target: other flags
    if (others.find(record.target) != std::string::npos) continue;
    others += (others.empty() ? "" : "; ") + record.target;
  }
  if (others.empty()) return lead + here + ": " + cause;
  return lead + here + ": the cache holds it with these values only as built for another target (" + others +
         "): the node that built it had another CPU, or another KILN_TARGET_CPU. Kernels built for one CPU miss on "
         "another: set KILN_TARGET_CPU to the same x86-64 level or CPU (x86-64-v3, znver4, ...) where the cache is "
         "filled and where it is used. Building it here failed too: " + cause;
}

// The Config fields the key holds besides the kernel and its values: with
// them the key, and so the translation unit, can be computed again. A GPU
// build is never checked (check mode is CPU only).
cache::BuildRecipe BuildPath::recipe(const Job& job, const Compiled& compiled) const {
  const std::string& opt_level = job.opt_level.empty() ? config_.opt_level : job.opt_level;
  return {opt_level, config_.fp_contract, config_.target_cpu, config_.check && !job.gpu, compiled.compiler,
          gather_as_built(config_)};
}

std::optional<BuildSlots::Slot> BuildPath::take_slot(const Job& job, bool until_published) {
  const auto start = Clock::now();
  const std::filesystem::path entry_file = cache_.writable() ? cache_.entry_path(job.key) : std::filesystem::path();
  const auto published = [&] {
    std::error_code ignored;
    return !entry_file.empty() && std::filesystem::exists(entry_file, ignored);
  };
  if (!slots_.problem().empty()) warn_slots_once("kiln: no node-wide limit on compiles (" + slots_.problem() + ")");
  std::optional<BuildSlots::Slot> slot =
      slots_.take(start + config_.lock_timeout, until_published ? std::function<bool()>(published) : nullptr);
  metrics_.record(job.metrics_name, "slot_wait", ms_since(start));
  if (slot && !slot->why_free().empty())
    cache_.warn_once("kiln: compiling " + job.metrics_name + " without a build slot: " + slot->why_free());
  return slot;
}

void BuildPath::warn_slots_once(const std::string& message) {
  if (!slot_warning_given_.exchange(true)) base::log().warn("{}", message);
}

}  // namespace kiln::runtime
