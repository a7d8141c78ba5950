// Runtime::kernels over a group (MPI ranks). Members may ask for different
// things: a real decomposition gives every rank its own sizes, so its own
// keys, and even its own number of requests. Every member runs the same
// steps in the same order, as collective calls must:
//   1. each member prepares its requests (keys, no I/O); one gather tells
//      every member what every member asked for: the union of the keys,
//      in member order, and who asked for each;
//   2. member 0 reads every key of the union from the cache and broadcasts
//      which it has;
//   3. each miss goes to one of the members that asked for it (the one given
//      the fewest so far), which compiles it under the key's build lock and
//      publishes it to the cache: each distinct miss is compiled once;
//   4. one gather carries what each member provides (member 0 the hits, the
//      others the misses they compiled, or why they failed);
//   5. a failure anywhere (a kernel that does not compile) is thrown by
//      every member alike; else each member links, from memory, exactly
//      what it asked for.
// Requests that do not prepare on some member end the call after step 1, on
// every member alike, before anything is read or compiled. Steps 1 to 5 are
// the obtain step of the resolution loop (resolve/pipeline.hpp), whose
// prepare and publish steps are a batch's.
#include <algorithm>
#include <exception>
#include <functional>
#include <optional>
#include <unordered_map>

#include "kiln/errors.hpp"
#include "runtime/collective/failure_codec.hpp"
#include "runtime/collective/messages.hpp"
#include "runtime/resolve/bundles.hpp"
#include "runtime/resolve/runtime_impl.hpp"

namespace kiln {
namespace {

using runtime::Asked;
using runtime::decode;
using runtime::encode;
using runtime::failure_of;
using runtime::kObject;
using runtime::pack;
using runtime::rethrow;
using runtime::unpack;
using runtime::Unpacked;

// A key of the union, with the members that asked for it (in member order).
struct Wanted {
  cache::Key key;
  std::string name;
  std::vector<int> askers;
};

// The union of every member's keys, in member order, and where each key stands in it.
struct Union {
  std::vector<Wanted> wanted;
  std::unordered_map<cache::Key, std::size_t, cache::KeyHash> index;
};

Union union_of(const std::vector<Asked>& asked) {
  Union out;
  for (std::size_t member = 0; member < asked.size(); ++member)
    for (std::size_t i = 0; i < asked[member].keys.size(); ++i) {
      const auto [it, fresh] = out.index.emplace(asked[member].keys[i], out.wanted.size());
      if (fresh) out.wanted.push_back({asked[member].keys[i], asked[member].names[i], {}});
      out.wanted[it->second].askers.push_back(static_cast<int>(member));
    }
  return out;
}

// Who provides each key: member 0 the hits (it read them); each miss the
// member that asked for it with the fewest misses given so far, the lowest
// of those on a tie. The same on every member: it sees the same union.
std::vector<int> providers(const std::vector<Wanted>& wanted, const std::vector<char>& hit, int members) {
  std::vector<int> provider(wanted.size(), 0), given(static_cast<std::size_t>(members), 0);
  for (std::size_t u = 0; u < wanted.size(); ++u) {
    if (hit[u]) continue;
    int best = wanted[u].askers.front();
    for (int member : wanted[u].askers)
      if (given[static_cast<std::size_t>(member)] < given[static_cast<std::size_t>(best)]) best = member;
    provider[u] = best;
    ++given[static_cast<std::size_t>(best)];
  }
  return provider;
}

// Step 1's gather: every member's keys, or its failure to prepare, which
// every member then throws alike: nothing is compiled.
Union ask(runtime::Resolution& mine, const std::optional<Unpacked>& failure, Communicator& group) {
  Asked own;
  own.failure = failure;
  if (!failure)
    for (std::size_t k = 0; k < mine.keys(); ++k) {
      own.keys.push_back(mine.first_job(k).key);
      own.names.push_back(mine.first_job(k).metrics_name);
    }
  std::vector<Asked> asked;
  for (const std::vector<char>& bytes : group.gather_all(encode(own))) asked.push_back(decode(bytes));
  for (std::size_t member = 0; member < asked.size(); ++member)
    if (asked[member].failure)
      rethrow(*asked[member].failure, "kiln: collective resolution: member " + std::to_string(member) + ": ");
  return union_of(asked);
}

// The union's bundle, when it has one: a CPU union of two or more keys.
std::optional<runtime::BundleBytes> read_union_bundle(runtime::CacheTiers& cache, const std::vector<Wanted>& wanted) {
  std::vector<cache::Key> keys;
  for (const Wanted& w : wanted) keys.push_back(w.key);
  std::sort(keys.begin(), keys.end(), [](const cache::Key& a, const cache::Key& b) {
    return a.high != b.high ? a.high < b.high : a.low < b.low;
  });
  return wanted.empty() ? std::nullopt : runtime::read_bundle_bytes(cache, keys, wanted.front().name);
}

// After an exchange that found no bundle: the one of what everyone received,
// so that the next resolution of the union reads one file.
void write_union_bundle(runtime::CacheTiers& cache, const std::vector<Wanted>& wanted,
                        const std::vector<Unpacked>& binaries) {
  runtime::BundleBytes all;
  for (std::size_t u = 0; u < wanted.size(); ++u) all.emplace(wanted[u].key, binaries[u].bytes);
  runtime::store_bundle_of(cache, all);
}

// What reached this member for one of its keys.
struct Received {
  std::vector<char> bytes;
  bool read_here = false;   // member 0's own read of the cache
  bool built_here = false;  // a miss this member compiled
  bool from_peer = false;   // provided by another member
};

// A provider's build of a miss: its bytes, or an exception saying why not.
using Build = std::function<std::vector<char>(runtime::Job&)>;

// Steps 2 to 5 for my keys (mine.outcomes' order); throws the first failure
// of any member, on every member alike.
std::vector<Received> exchange(runtime::Resolution& mine, const Union& all, Communicator& group,
                               runtime::CacheTiers& cache, const Build& build) {
  const int me = group.rank(), members = group.size();
  const std::vector<Wanted>& wanted = all.wanted;
  // 2. Member 0 reads (the union's bundle first: resolve/bundles.hpp); everyone learns which keys it found.
  std::vector<std::optional<std::vector<char>>> found(wanted.size());
  std::vector<char> hit(wanted.size(), 0);
  std::optional<runtime::BundleBytes> bundled;
  if (me == 0) {
    bundled = read_union_bundle(cache, wanted);
    for (std::size_t u = 0; u < wanted.size(); ++u) {
      if (bundled && bundled->contains(wanted[u].key)) found[u] = std::move(bundled->at(wanted[u].key));
      else found[u] = cache.read(wanted[u].key, wanted[u].name);
      if (found[u]) hit[u] = 1;
    }
  }
  group.broadcast(hit, 0);

  // 3. The misses, each built by one member that asked for it.
  const std::vector<int> provider = providers(wanted, hit, members);
  std::vector<char> message;
  for (std::size_t u = 0; u < wanted.size(); ++u) {
    if (provider[u] != me) continue;
    if (hit[u]) {
      pack(message, kObject, *found[u]);
      continue;
    }
    runtime::Job& job = mine.first_job(mine.index.at(wanted[u].key));
    try {
      pack(message, kObject, build(job));
    } catch (const std::exception& e) {
      const Unpacked failure = failure_of(e, job.info->name);
      pack(message, failure.status, failure.bytes);
    }
  }

  // 4. Everyone's shares, in member order, then in key order.
  const std::vector<std::vector<char>> provided = group.gather_all(message);
  std::vector<Unpacked> binaries(wanted.size());
  std::vector<std::size_t> at(static_cast<std::size_t>(members), 0);
  for (std::size_t u = 0; u < wanted.size(); ++u) {
    const auto from = static_cast<std::size_t>(provider[u]);
    binaries[u] = unpack(provided[from], at[from]);
  }

  // 5. The same first failure on every member, else what I asked for.
  for (const Unpacked& b : binaries)
    if (b.status != kObject) rethrow(b);
  if (me == 0)
    for (std::size_t u = 0; u < wanted.size(); ++u)
      if (hit[u]) cache.note_hit(wanted[u].key);
  if (me == 0 && !bundled) write_union_bundle(cache, wanted, binaries);
  std::vector<Received> out(mine.keys());
  for (std::size_t k = 0; k < mine.keys(); ++k) {
    const std::size_t u = all.index.at(mine.first_job(k).key);
    out[k] = {std::move(binaries[u].bytes), me == 0 && hit[u] != 0, provider[u] == me && hit[u] == 0,
              provider[u] != me};
  }
  return out;
}

}  // namespace

// The resolution loop (resolve/pipeline.hpp) with the group's exchange as
// its obtain step; preparing and publishing are a batch's.
std::vector<Kernel> Runtime::kernels(std::span<const KernelRequest> requests, Communicator& group) {
  // 1. Keys. A request that does not prepare is sent, not thrown: a member
  // that left here would leave the others waiting in the obtain step.
  runtime::Resolution resolution;
  std::optional<Unpacked> failure;
  try {
    for (std::size_t i = 0; i < requests.size(); ++i)
      resolution.add(impl_->prepare(requests[i].name, requests[i].spec, requests[i].mode), i);
  } catch (const std::exception& e) {
    failure = failure_of(e, "");
  }
  // The provider's build path, whose look under the build lock reads the
  // cache without counting a disk hit (member 0 counted its own read).
  const auto build = [&](runtime::Job& job) {
    std::vector<char> binary;
    (void)impl_->build_bytes(job, [&] { return impl_->cache().read(job.key, job.metrics_name); }, binary);
    return binary;
  };
  const auto obtain = [&](runtime::Resolution& mine) {
    const Union all = ask(mine, failure, group);
    std::vector<Received> received = exchange(mine, all, group, impl_->cache(), build);
    // Linked from memory: a key this process linked before is linked again.
    for (std::size_t k = 0; k < mine.keys(); ++k) {
      runtime::Job& job = mine.first_job(k);
      runtime::Outcome& outcome = mine.outcomes[k];
      try {
        if (const std::optional<detail::EntryFn> linked = impl_->linked().find(job.key)) {
          outcome.how = runtime::Obtained::linked;
          outcome.entry = *linked;
          continue;
        }
        outcome.entry = impl_->linked().add(job.key, impl_->load(job, received[k].bytes));
        outcome.how = received[k].built_here ? runtime::Obtained::built : runtime::Obtained::loaded;
        if (received[k].read_here) impl_->metrics().count_disk_hit(job.metrics_name);
        else if (received[k].from_peer) impl_->metrics().count_peer_hit(job.metrics_name);
      } catch (...) {
        outcome.error = std::current_exception();
      }
    }
  };
  std::vector<Kernel> out(requests.size());
  const auto publish = [&](runtime::Job& job, const runtime::Outcome& outcome, bool repeat, std::size_t request) {
    out[request] = Kernel(&impl_->publish(job, outcome, repeat).call);
  };
  runtime::run(resolution, {.obtain = obtain, .publish = publish}, impl_->metrics());
  return out;
}

}  // namespace kiln
