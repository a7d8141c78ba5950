// Manifests: every (kernel, specialisation, mode, backend, architecture) a
// cache holds, as JSON, so that a job script can compile all of them ahead of
// a run (`kiln cache export-manifest`, `kiln warm --manifest`).
//
//   {"kiln_manifest": 1, "entries": [
//     {"kernel": "update_theta_and_exner", "mode": "specialised", "backend": "cpu", "arch": "",
//      "specialisation": {"horizontal_start": 0, ..., "rd_o_cvd": 0.4, "theta_v": [1, 20480]}}, ...]}
//
// A static parameter may list several values ("at_first_substep": [false, true]):
// the entry stands for the cross product of all such lists, as ICON's
// production set-up compiles each program for every variant it will meet.
// Arrays of integers that name an array argument are its strides.
//
// An entry of a user kernel (one not embedded in libkiln) also carries
// "kernel_file", the file it was registered from (empty when it was
// registered as text), and "kernel_digest", the digest of that text as the
// cache key takes it: `kiln warm` registers the file and refuses one whose
// text has changed. Manifests without them stay valid for embedded kernels.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "kiln/kiln.hpp"

namespace kiln::cli {

struct ManifestEntry {
  std::string kernel;
  Mode mode = Mode::specialised;
  std::string backend = "cpu";  // cpu | cuda | hip
  std::string arch{};           // GPUs: sm_90, compute_90, gfx90a; empty for the CPU (this host's)
  std::string specialisation;   // JSON object text
  std::string kernel_file{};    // a user kernel's file (absolute); empty for embedded kernels and text
  std::string kernel_digest{};  // a user kernel's text digest; empty for embedded kernels
  bool operator==(const ManifestEntry&) const = default;
};

// One entry per index record (the index's kernel names carry " (generic)" and
// " [cuda sm_90]" for generic and GPU builds; those become mode, backend, arch).
// A user kernel's records of an earlier text (the cache keeps them until gc)
// are left out: only its latest text's, by when they were stored, can be built again.
std::vector<ManifestEntry> manifest_from_index(const std::vector<CacheRecord>& records);
// The manifest of the cache `config` names, from its index. Throws Error,
// its message led by `command` ("kiln warm"), when the index is off, is not
// kiln's, or cannot be read: an empty manifest would say the cache is empty.
std::vector<ManifestEntry> manifest_of_cache(const Config& config, std::string_view command);

std::string manifest_json(const std::vector<ManifestEntry>& entries);
// Throws Error naming what is wrong (not JSON, a missing or ill-typed field).
std::vector<ManifestEntry> parse_manifest(std::string_view text);

// Registers the user kernels the entries name, so that they can be warmed:
// a kernel the caller has not registered (`kiln warm --kernel-file`) is
// registered from the entry's kernel_file. Throws Error naming the kernel,
// the file and both digests when the registered text's digest is not the
// entry's (the file changed since the export), and Error naming the kernel
// and the file when the file cannot be read, does not parse or declares
// another kernel. Entries without a digest (embedded kernels) need nothing.
void register_manifest_kernels(Runtime& rt, const std::vector<ManifestEntry>& entries);

// The Specs an entry stands for: one, or the cross product of its listed
// values, in order. Throws SpecError naming the entry's kernel and the value.
std::vector<Spec> expand_specialisation(const ManifestEntry& entry, const KernelDeclaration& declaration);

}  // namespace kiln::cli
