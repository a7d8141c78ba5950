// Cache bundles (cache/bundle_format.hpp) mapped into this process: the whole
// file once, readable and executable, through the descriptor it was opened
// and judged through; its bytes are then checked in that very mapping
// (cache::DiskStore::get_mapped), and each member kernel runs from its image
// inside it. What mapped_entries.hpp does per entry file, per bundle file:
// the same reasons (the mapping keeps the verified file, known by device and
// inode, and lasts until the process ends) hold here.
//
// Only a binary that the direct mapper would map as one segment at its
// image's start, without zero fill (jit/elf_image.hpp: a self-contained
// kernel linked -z rodynamic), runs from the bundle's mapping: its image is
// then exactly what the direct mapper would map. Writers bundle only such
// binaries (runs_from_bundle); any other kernel of a batch loads from its own
// entry: it needs the dynamic loader or a mapping of several segments.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <span>
#include <string>

#include "cache/disk_store.hpp"

namespace kiln::runtime {

// A bundle file's mapping while its bytes are checked: the one this process
// kept before of the same file (device, inode and size: a later Runtime pays
// no second mapping), or a new one, unmapped when this goes unless kept.
class BundleMapping {
 public:
  BundleMapping() = default;
  ~BundleMapping();
  BundleMapping(const BundleMapping&) = delete;
  BundleMapping& operator=(const BundleMapping&) = delete;

  // The mapper of cache::DiskStore::get_mapped: the whole of `file`, private
  // and never writable. Empty when it cannot be mapped (a noexec mount, an
  // empty file: logged at debug level, naming `what`). Call it once.
  std::span<const char> map(const cache::OpenedEntry& file, const std::string& what);
  // Where the file lies in memory; null before a successful map().
  const char* base() const { return base_; }
  // Kernels run from it now: it stays until the process ends, and later
  // Runtimes are given it for the same file.
  void keep();

 private:
  const char* base_ = nullptr;
  std::uint64_t length_ = 0;
  dev_t device_ = 0;
  ino_t inode_ = 0;
  bool fresh_ = false;  // mapped here, not yet kept: unmapped by the destructor
};

// Whether `binary` runs from a bundle's mapping (above) and defines `symbol`.
bool runs_from_bundle(std::span<const char> binary, const std::string& symbol);

// The address of `symbol` in the member whose verified bytes are `image`,
// lying at `offset` of the bundle mapped at `base`; null when that member
// does not run from the bundle's mapping (above) or lacks the symbol.
void* bundle_member(const char* base, std::span<const char> image, std::uint64_t offset, const std::string& symbol);

}  // namespace kiln::runtime
