/* Administration of kiln's on-disk kernel cache from C: what `kiln cache`
 * does (ls, stats, show, verify, gc, clear, reindex), over kiln/cache.hpp.
 *
 * Every call returns a kiln_status (kiln/kiln.h); on any other than KILN_OK,
 * kiln_last_error() names the folder or file and the cause. A cache handle
 * is for one thread at a time; any number of handles and processes may work
 * on one folder while runtimes use it.
 *
 * Link: CMake target kiln::c (libkiln_c), or pkg-config kiln. */
#ifndef KILN_KILN_CACHE_H
#define KILN_KILN_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "kiln/kiln.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct kiln_cache kiln_cache;

/* One entry: its file, and its record (from the index for kiln_cache_list,
 * from the entry's own metadata for kiln_cache_show). The strings lie in the
 * same allocation as the entries: one kiln_free() releases all. */
typedef struct kiln_cache_entry {
  char key[33];               /* 32 lowercase hex digits */
  const char* file;
  uint64_t file_bytes;
  int64_t stored;             /* unix seconds: the file's modification time */
  int has_record;             /* 0: not in the index, and the fields below are empty or 0 */
  const char* kernel;         /* "name", "name (generic)", "name [cuda sm_90]" */
  const char* specialisation; /* JSON object text */
  const char* backend;        /* "cpu", "cuda", "hip" */
  const char* target;
  uint64_t payload_bytes;
  double compile_ms;
  int64_t last_used; /* unix seconds */
  int64_t hits;
} kiln_cache_entry;

typedef struct kiln_cache_stats {
  uint64_t entries; /* entry files */
  uint64_t bytes;   /* their sizes */
  uint64_t indexed; /* the index's records */
  int64_t hits;
  double compile_ms; /* what the entries cost to build */
} kiln_cache_stats;

typedef struct kiln_cache_verify_report {
  uint64_t checked;
  uint64_t bad;     /* corrupt, unreadable or untrusted entries, and odd files */
  uint64_t removed; /* bad entries removed */
  uint64_t odd;     /* non-files under an entry's name, left in place */
  uint64_t temporaries_removed;
  int damage_left; /* 1: bad entries or files stayed */
} kiln_cache_verify_report;

typedef struct kiln_cache_gc_report {
  uint64_t limit;
  uint64_t removed;
  uint64_t bytes_freed;
  uint64_t bytes_left;
  uint64_t failures; /* entries that had to go and stayed */
} kiln_cache_gc_report;

typedef struct kiln_cache_reindex_report {
  uint64_t records;
  uint64_t without_metadata;
  uint64_t skipped;
} kiln_cache_reindex_report;

/* The cache folder `dir`, its index at <dir>/index.sqlite. read_only nonzero:
 * nothing is ever written or removed (the index is not opened either). */
KILN_C_API kiln_status kiln_cache_open(const char* dir, int read_only, kiln_cache** out);
/* The cache a runtime of `config` writes to: its cache folder, index, trusted folders. */
KILN_C_API kiln_status kiln_cache_open_from_config(const kiln_config* config, kiln_cache** out);
KILN_C_API void kiln_cache_close(kiln_cache* cache);

/* Every entry file, by key, with its index record where it has one. */
KILN_C_API kiln_status kiln_cache_list(kiln_cache* cache, kiln_cache_entry** entries_out, size_t* count_out);
KILN_C_API kiln_status kiln_cache_get_stats(kiln_cache* cache, kiln_cache_stats* out);
/* The entry of `key` (32 hex digits) read whole and verified: *entry_out is
 * NULL when there is none. KILN_ERROR_ARGUMENT for text that is not a key;
 * KILN_ERROR, naming the file, for a corrupt or untrusted entry. */
KILN_C_API kiln_status kiln_cache_show(kiln_cache* cache, const char* key, kiln_cache_entry** entry_out);

/* Reads every entry; removes bad ones (unless read-only) and their records. */
KILN_C_API kiln_status kiln_cache_verify(kiln_cache* cache, kiln_cache_verify_report* out);
/* Least recently used entries go until the cache fits in max_bytes. KILN_ERROR
 * when entries stayed and it does not fit (*out is filled all the same). */
KILN_C_API kiln_status kiln_cache_gc(kiln_cache* cache, uint64_t max_bytes, kiln_cache_gc_report* out);
/* The same, and entries last used more than max_age_seconds ago go too
 * (KILN_ERROR_ARGUMENT for a negative age). */
KILN_C_API kiln_status kiln_cache_gc_age(kiln_cache* cache, uint64_t max_bytes, int64_t max_age_seconds,
                                         kiln_cache_gc_report* out);
/* Removes every entry. KILN_ERROR when some stayed (*removed_out counts those that went). */
KILN_C_API kiln_status kiln_cache_clear(kiln_cache* cache, uint64_t* removed_out);
/* Rebuilds the index from the entries' metadata. */
KILN_C_API kiln_status kiln_cache_reindex(kiln_cache* cache, kiln_cache_reindex_report* out);

/* A size as KILN_CACHE_MAX_SIZE takes it ("500M", "1.5G", bytes);
 * KILN_ERROR_INVALID_ARGUMENT for anything else. */
KILN_C_API kiln_status kiln_cache_parse_size(const char* text, uint64_t* bytes_out);

#ifdef __cplusplus
}
#endif

#endif /* KILN_KILN_CACHE_H */
