// The publish step of a CPU kernel: the handle, made from the job and its
// key's entry, in the memory table, where later lookups hit.
#include "runtime/call/threads.hpp"
#include "runtime/resolve/runtime_impl.hpp"

namespace kiln {

std::unique_ptr<detail::ResolvedKernel> Runtime::Impl::make_resolved(runtime::Job& job, detail::EntryFn entry,
                                                                     bool from_memory) {
  auto resolved = std::make_unique<detail::ResolvedKernel>();
  resolved->params = std::move(job.bound.values);
  resolved->info = job.info;
  for (std::size_t i = 0; i < job.info->args.size(); ++i) {
    const lang::ArgDecl& arg = job.info->args[i];
    resolved->signature.push_back(
        detail::signature_of(static_cast<std::int32_t>(arg.type), lang::passed_rank(arg.rank, job.bound.nproma[i])));
  }
  resolved->strides = job.bound.strides;
  resolved->nproma = job.bound.nproma;
  resolved->nblks = job.bound.nblks;
  resolved->specialised = job.specialised();
  resolved->key = job.key;
  resolved->metrics_name = job.metrics_name;
  resolved->metrics = config_.time_calls ? &metrics_ : nullptr;
  if (from_memory) resolved->memory_hits.add();  // the binary came from memory
  if (!job.info->temporaries.empty())
    resolved->temporaries = std::make_unique<runtime::Temporaries>(*job.info, metrics_, job.metrics_name);
  resolved->check = config_.check;
  // Check mode stops a kernel at its first violation, on one thread: the
  // others would wait at the next phase's barrier for ever.
  const int threads = config_.check ? 1 : config_.threads > 0 ? config_.threads : runtime::openmp_threads();
  resolved->call = {.entry = entry,
                    .params = resolved->params.data(),
                    .signature = resolved->signature.data(),
                    .count = resolved->signature.size(),
                    .out_of_line = resolved->metrics != nullptr || resolved->temporaries != nullptr || config_.check ||
                                   threads > 1,
                    .threads = threads,
                    .owner = resolved.get()};
  return resolved;
}

const detail::ResolvedKernel& Runtime::Impl::publish(runtime::Job& job, const runtime::Outcome& outcome,
                                                     bool repeat) {
  const bool from_memory = outcome.how == runtime::Obtained::linked || repeat;
  if (!outcome.stand_in.empty()) return publish_stand_in(job, outcome, from_memory);
  runtime::MemoryKey memory_key{job.name, job.mode, job.spec.canonical(), job.spec.hash()};
  return memory_.insert(std::move(memory_key), make_resolved(job, outcome.entry, from_memory));
}

}  // namespace kiln
