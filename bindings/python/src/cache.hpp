// kiln.Cache: cache administration (kiln/cache.hpp) from Python, and its
// result classes (CacheEntryFile, CacheRecord, CacheEntry, CacheStats, the
// reports of verify, gc, clear and reindex).
#pragma once

#include <nanobind/nanobind.h>

namespace kiln::python {

void define_cache(nanobind::module_& m);

}  // namespace kiln::python
