// Runtime::kernels over a group (MPI ranks): one member reads the cache, the
// misses are shared out, and the binaries travel through the group instead
// of through the file system. Every member runs the same steps in the same
// order, as collective calls must:
//   1. every member computes the keys (no I/O);
//   2. member 0 reads every key from the cache and broadcasts which it has;
//   3. the misses are dealt out round-robin; each member compiles its own
//      (under the key's build lock: other jobs may share the cache) and
//      publishes them to the cache;
//   4. each member broadcasts what it holds (member 0 the hits, every member
//      the misses it compiled, or why they failed);
//   5. every member links every binary from memory.
#include <cstdint>
#include <cstring>

#include "kiln/errors.hpp"
#include "runtime/resolve/runtime_impl.hpp"

namespace kiln {
namespace {

// What a member sends for a key: the object, or why there is none.
enum Status : char { kObject = 0, kCompileError = 1, kOtherError = 2 };

// One key's share of a broadcast: a status byte, a length, then the object;
// for a compile error the kernel's name, a NUL and the diagnostics; for any
// other error its message.
void pack(std::vector<char>& out, Status status, std::span<const char> bytes) {
  out.push_back(status);
  const std::uint64_t size = bytes.size();
  const char* size_bytes = reinterpret_cast<const char*>(&size);
  out.insert(out.end(), size_bytes, size_bytes + sizeof size);
  out.insert(out.end(), bytes.begin(), bytes.end());
}

struct Unpacked {
  Status status = kObject;
  std::vector<char> bytes;
};

Unpacked unpack(const std::vector<char>& in, std::size_t& at) {
  Unpacked u;
  std::uint64_t size = 0;
  if (at + 1 + sizeof size > in.size()) throw Error("kiln: collective resolution: a truncated message");
  u.status = static_cast<Status>(in[at]);
  std::memcpy(&size, in.data() + at + 1, sizeof size);
  at += 1 + sizeof size;
  if (size > in.size() - at) throw Error("kiln: collective resolution: a truncated message");
  u.bytes.assign(in.begin() + static_cast<std::ptrdiff_t>(at), in.begin() + static_cast<std::ptrdiff_t>(at + size));
  at += size;
  return u;
}

std::vector<char> error_bytes(const std::string& kernel, const std::string& diagnostics) {
  std::vector<char> out(kernel.begin(), kernel.end());
  out.push_back('\0');
  out.insert(out.end(), diagnostics.begin(), diagnostics.end());
  return out;
}

[[noreturn]] void rethrow(const Unpacked& error) {
  const std::string text(error.bytes.begin(), error.bytes.end());
  if (error.status != kCompileError) throw Error(text);
  const std::size_t nul = text.find('\0');
  throw CompileError(text.substr(0, nul), nul == std::string::npos ? std::string() : text.substr(nul + 1));
}

}  // namespace

std::vector<Kernel> Runtime::kernels(std::span<const KernelRequest> requests, Communicator& group) {
  const int me = group.rank(), members = group.size();
  // 1. Keys; one task per distinct key (first job that has it).
  std::vector<runtime::Job> jobs;
  for (const KernelRequest& r : requests) jobs.push_back(impl_->prepare(r.name, r.spec, r.mode));
  std::vector<std::size_t> unique, unique_of(jobs.size());
  std::unordered_map<cache::Key, std::size_t, cache::KeyHash> by_key;
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    const auto [it, fresh] = by_key.emplace(jobs[j].key, unique.size());
    if (fresh) unique.push_back(j);
    unique_of[j] = it->second;
  }

  // 2. Member 0 reads; everyone learns which keys it found.
  std::vector<std::optional<std::vector<char>>> found(unique.size());
  std::vector<char> hit(unique.size(), 0);
  if (me == 0)
    for (std::size_t u = 0; u < unique.size(); ++u)
      if ((found[u] = impl_->cache().read(jobs[unique[u]].key, jobs[unique[u]].metrics_name))) hit[u] = 1;
  group.broadcast(hit, 0);

  // 3. The misses, dealt out; each member builds its own.
  std::vector<int> provider(unique.size(), 0);
  std::vector<std::vector<char>> mine(unique.size());
  std::vector<Status> mine_status(unique.size(), kObject);
  int miss = 0;
  for (std::size_t u = 0; u < unique.size(); ++u) {
    if (hit[u]) continue;
    provider[u] = miss++ % members;
    if (provider[u] != me) continue;
    runtime::Job& job = jobs[unique[u]];
    // Any failure is sent, not thrown: a member that left the collective
    // here would leave the others waiting in the broadcasts below.
    try {
      const auto published = [&] {
        std::optional<std::vector<char>> payload = impl_->cache().read(job.key, job.metrics_name);
        if (payload) mine[u] = std::move(*payload);
        return payload.has_value();
      };
      runtime::Built built = impl_->builder().build(job, {.lock_wait = impl_->config().lock_timeout}, published);
      if (built.how == runtime::Built::How::built) mine[u] = std::move(built.binary);
    } catch (const CompileError& e) {
      mine_status[u] = kCompileError;
      mine[u] = error_bytes(job.info->name, e.diagnostics());
    } catch (const std::exception& e) {
      mine_status[u] = kOtherError;
      mine[u].assign(e.what(), e.what() + std::strlen(e.what()));
    }
  }

  // 4. Each member in turn sends what it provides, in key order.
  std::vector<Unpacked> binaries(unique.size());
  for (int root = 0; root < members; ++root) {
    std::vector<char> message;
    if (root == me)
      for (std::size_t u = 0; u < unique.size(); ++u) {
        if (provider[u] != root) continue;
        if (hit[u]) pack(message, kObject, *found[u]);
        else pack(message, mine_status[u], mine[u]);
      }
    group.broadcast(message, root);
    std::size_t at = 0;
    for (std::size_t u = 0; u < unique.size(); ++u)
      if (provider[u] == root) binaries[u] = unpack(message, at);
  }

  // 5. Link everything; the same first error, if any, on every member.
  for (std::size_t u = 0; u < unique.size(); ++u)
    if (binaries[u].status != kObject) rethrow(binaries[u]);
  std::vector<Kernel> out(requests.size());
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    const std::size_t u = unique_of[j];
    runtime::Job& job = jobs[j];
    detail::EntryFn entry = nullptr;
    bool from_memory = true;
    if (const std::optional<detail::EntryFn> linked = impl_->linked().find(job.key)) entry = *linked;
    if (!entry) {
      from_memory = false;
      entry = impl_->linked().add(job.key, impl_->load(job, binaries[u].bytes));
      if (me == 0 && hit[u]) impl_->cache().note_hit(job.key);
    }
    if (j == unique[u] && !from_memory) {
      if (me == 0 && hit[u]) impl_->metrics().count_disk_hit(job.metrics_name);
      else if (provider[u] != me) impl_->metrics().count_peer_hit(job.metrics_name);
    }
    out[j] = Kernel(&impl_->publish(job, entry, from_memory).call);
  }
  return out;
}

}  // namespace kiln
