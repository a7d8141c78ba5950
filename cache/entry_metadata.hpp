// What an entry's metadata block holds (entry_format.hpp stores it opaque):
// the index record's descriptive fields as a small JSON object, so the index
// can be rebuilt from the entries alone (index_rebuild.hpp).
//
//   {"kernel": "...", "specialisation": "<JSON text>", "backend": "cpu",
//    "target": "...", "compile_ms": 12.5}
//
// and, for a user's kernel (index_record.hpp), "kernel_file" and "kernel_digest".
//
// Unknown fields are ignored, so later versions may add some.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "cache/index.hpp"

namespace kiln::cache {

// kernel, specialisation, backend, target and compile_ms of `record` (and
// its kernel file and digest when it has a digest); the
// key, size, times and hits are not stored (the file's name, size and mtime
// give those back).
std::string encode_metadata(const IndexRecord& record);

// The record's fields from metadata text, or nullopt when the text is not a
// JSON object with every field of the right type (compile_ms a finite number
// >= 0). Never throws on bad input: the text comes from files on disk.
std::optional<IndexRecord> decode_metadata(std::string_view text);

}  // namespace kiln::cache
