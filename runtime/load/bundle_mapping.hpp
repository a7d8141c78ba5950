// Cache bundles (cache/bundle_format.hpp) mapped into this process: the whole
// file once, readable and executable, through the descriptor its bytes were
// verified through; each member kernel then runs from its image inside that
// one mapping. What mapped_entries.hpp does per entry file, per bundle file:
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

#include <cstdint>
#include <span>
#include <string>

#include "runtime/load/mapped_entries.hpp"

namespace kiln::runtime {

// The base of the mapping of `file` (its first `length` bytes), mapped on
// first use; a bundle mapped before (the same device and inode) is not
// mapped again. Null when it cannot be mapped (a noexec mount: logged at
// debug level). `file.descriptor` must be the file the bytes were verified through.
const char* map_bundle(const EntryFile& file, std::uint64_t length, const std::string& what);

// Whether `binary` runs from a bundle's mapping (above) and defines `symbol`.
bool runs_from_bundle(std::span<const char> binary, const std::string& symbol);

// The address of `symbol` in the member whose verified bytes are `image`,
// lying at `offset` of the bundle mapped at `base`; null when that member
// does not run from the bundle's mapping (above) or lacks the symbol.
void* bundle_member(const char* base, std::span<const char> image, std::uint64_t offset, const std::string& symbol);

}  // namespace kiln::runtime
