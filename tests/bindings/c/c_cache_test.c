/* Cache administration from C99 (kiln/kiln_cache.h): two entries made by a
 * runtime, listed with their records, counted, shown; one corrupted by hand
 * and found by verify; gc to a bound with exact counts; reindex; clear; a
 * read-only handle refusing to write; misuse named. Exits non-zero when a
 * check fails, saying which. */
#define _POSIX_C_SOURCE 200809L
#include <kiln/kiln.h>
#include <kiln/kiln_cache.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "c_checks.h"

static const char* kSmooth =
    "#pragma kiln kernel smooth\n"
    "#pragma kiln array double x[1]\n"
    "#pragma kiln domain n\n"
    "for (kiln::index_t i = 0; i < n; ++i) x(i) *= 0.5;\n";

/* Two entries of `smooth` (n = 8 and 16), made by a runtime that is gone after. */
static void make_entries(const char* cache) {
  kiln_config* config = NULL;
  kiln_runtime* rt = NULL;
  kiln_spec* spec = NULL;
  kiln_kernel k = NULL;
  int64_t n;
  CHECK(kiln_config_from_env(&config) == KILN_OK);
  CHECK(kiln_config_set_cache_dir(config, cache) == KILN_OK);
  CHECK(kiln_runtime_create_from_config(config, &rt) == KILN_OK);
  kiln_config_destroy(config);
  CHECK(kiln_register_kernel(rt, kSmooth, "smooth.kiln", NULL) == KILN_OK);
  for (n = 8; n <= 16; n += 8) {
    CHECK(kiln_spec_create(&spec) == KILN_OK);
    CHECK(kiln_spec_set_int(spec, "n", n) == KILN_OK);
    CHECK(kiln_kernel_get(rt, "smooth", spec, KILN_SPECIALISED, &k) == KILN_OK);
    kiln_spec_destroy(spec);
  }
  kiln_runtime_destroy(rt);
}

/* Flips the first byte of a file: an entry's payload comes first. */
static int flip_first_byte(const char* path) {
  FILE* f = fopen(path, "r+b");
  int c;
  if (!f) return 0;
  c = fgetc(f);
  if (c == EOF || fseek(f, 0, SEEK_SET) != 0 || fputc(c ^ 1, f) == EOF) {
    fclose(f);
    return 0;
  }
  return fclose(f) == 0;
}

int main(void) {
  kiln_cache* cache = NULL;
  kiln_cache* read_only = NULL;
  kiln_cache_entry* entries = NULL;
  kiln_cache_entry* shown = NULL;
  size_t count = 0;
  kiln_cache_stats stats;
  kiln_cache_verify_report verified;
  kiln_cache_gc_report collected;
  kiln_cache_reindex_report reindexed;
  uint64_t removed = 0, bytes = 0, second_entry_bytes = 0;
  char first_key[33] = "", first_file[4096] = "";
  char dir[] = "/tmp/kiln-c-cache-XXXXXX";
  if (!mkdtemp(dir)) return 2;
  make_entries(dir);

  CHECK(kiln_cache_open(dir, 0, &cache) == KILN_OK);
  CHECK(kiln_cache_list(cache, &entries, &count) == KILN_OK);
  CHECK(count == 2);
  if (count == 2) {
    CHECK(strlen(entries[0].key) == 32 && strcmp(entries[0].key, entries[1].key) < 0); /* by key */
    CHECK(entries[0].has_record == 1 && entries[1].has_record == 1);
    CHECK(strcmp(entries[0].kernel, "smooth") == 0 && strcmp(entries[0].backend, "cpu") == 0);
    CHECK(entries[0].payload_bytes > 0 && entries[0].payload_bytes < entries[0].file_bytes);
    CHECK(entries[0].hits == 0 && entries[0].stored > 0);
    CHECK(strstr(entries[0].file, dir) == entries[0].file);
    strcpy(first_key, entries[0].key);
    snprintf(first_file, sizeof first_file, "%s", entries[0].file);
    second_entry_bytes = entries[1].file_bytes;
    bytes = entries[0].file_bytes + entries[1].file_bytes;
  }
  kiln_free(entries);

  CHECK(kiln_cache_get_stats(cache, &stats) == KILN_OK);
  CHECK(stats.entries == 2 && stats.indexed == 2 && stats.bytes == bytes && stats.hits == 0);

  /* show: the entry whole, its record from its own metadata; none; not a key. */
  CHECK(kiln_cache_show(cache, first_key, &shown) == KILN_OK);
  CHECK(shown != NULL);
  if (shown) {
    CHECK(strcmp(shown->key, first_key) == 0 && shown->has_record == 1);
    CHECK(strcmp(shown->kernel, "smooth") == 0 && strstr(shown->specialisation, "\"n\":") != NULL);
  }
  kiln_free(shown);
  shown = NULL;
  CHECK(kiln_cache_show(cache, "00000000000000000000000000000000", &shown) == KILN_OK && shown == NULL);
  CHECK_FAILS(kiln_cache_show(cache, "12ab", &shown), KILN_ERROR_ARGUMENT, "'12ab' is not a cache key");

  /* verify: the corrupted entry found, removed, its record dropped. */
  CHECK(flip_first_byte(first_file));
  CHECK(kiln_cache_verify(cache, &verified) == KILN_OK);
  CHECK(verified.checked == 2 && verified.bad == 1 && verified.removed == 1 && verified.damage_left == 0);
  CHECK(kiln_cache_get_stats(cache, &stats) == KILN_OK);
  CHECK(stats.entries == 1 && stats.indexed == 1 && stats.bytes == second_entry_bytes);

  /* A read-only handle writes nothing. */
  CHECK(kiln_cache_open(dir, 1, &read_only) == KILN_OK);
  CHECK_FAILS(kiln_cache_clear(read_only, &removed), KILN_ERROR, "read-only");
  CHECK_FAILS(kiln_cache_gc(read_only, 0, &collected), KILN_ERROR, "read-only");
  kiln_cache_close(read_only);

  /* An age bound that every entry meets removes nothing; a negative age is misuse. */
  CHECK(kiln_cache_gc_age(cache, second_entry_bytes, 86400, &collected) == KILN_OK && collected.removed == 0);
  CHECK_FAILS(kiln_cache_gc_age(cache, second_entry_bytes, -1, &collected), KILN_ERROR_ARGUMENT, "not an age");

  /* gc to a bound: what fits stays, then the last entry goes. */
  CHECK(kiln_cache_gc(cache, second_entry_bytes, &collected) == KILN_OK);
  CHECK(collected.removed == 0 && collected.bytes_left == second_entry_bytes);
  CHECK(kiln_cache_gc(cache, second_entry_bytes - 1, &collected) == KILN_OK);
  CHECK(collected.limit == second_entry_bytes - 1 && collected.removed == 1 && collected.failures == 0);
  CHECK(collected.bytes_freed == second_entry_bytes && collected.bytes_left == 0);

  CHECK(kiln_cache_reindex(cache, &reindexed) == KILN_OK);
  CHECK(reindexed.records == 0 && reindexed.skipped == 0);
  CHECK(kiln_cache_clear(cache, &removed) == KILN_OK && removed == 0);
  kiln_cache_close(cache);

  CHECK(kiln_cache_parse_size("500M", &bytes) == KILN_OK && bytes == 500u * 1024u * 1024u);
  CHECK_FAILS(kiln_cache_parse_size("1e3", &bytes), KILN_ERROR_INVALID_ARGUMENT, "'1e3' is not a size");
  CHECK_FAILS(kiln_cache_open(NULL, 0, &cache), KILN_ERROR_INVALID_ARGUMENT, "kiln_cache_open");
  {
    char command[64];
    snprintf(command, sizeof command, "rm -rf %s", dir);
    if (system(command) != 0) fprintf(stderr, "cannot remove %s\n", dir);
  }
  if (failures == 0) printf("c_cache_test: every check passed\n");
  return failures == 0 ? 0 : 1;
}
