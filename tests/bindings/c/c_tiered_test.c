/* Tiered start from C99 (kiln_config_set_tiered, kiln_wait_for_specialised;
 * docs/manual/tiered-start.md): a specialised miss compiles the generic build
 * first, the wait returns with the specialised build in, and the counts in
 * the metrics say so exactly: the "(generic)" row one compile, the kernel's
 * own row one compile and every call after the wait. The generic build,
 * asked for by mode, computes the same bits. Without the setting no generic
 * build is made. Exits non-zero when a check fails, saying which. */
#define _POSIX_C_SOURCE 200809L
#include <kiln/kiln.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "c_checks.h"

static const char* kAxpz =
    "#pragma kiln kernel c_tiered_axpz\n"
    "#pragma kiln array double out[n]\n"
    "#pragma kiln array double x[n]\n"
    "#pragma kiln domain start end\n"
    "#pragma kiln static double a\n"
    "#pragma kiln size n contains start end\n"
    "for (kiln::index_t i = start; i < end; ++i) out(i) = a * x(i) + out(i);\n";

enum { kPoints = 32 };

/* A field of kernel `row`'s object in the metrics JSON (MetricsSnapshot::json,
 * two-space indented): `phase` NULL reads the row's own field ("compiles"),
 * else that phase's ("count"). -1 when the row has none; 0 for a phase
 * never timed (no calls of that build). */
static long metric(const char* json, const char* row, const char* phase, const char* field) {
  char key[128];
  const char *start, *end, *at;
  snprintf(key, sizeof key, "\"%s\": {", row); /* the kernels' object, not the timeline's "kernel": "..." */
  start = strstr(json, key);
  if (!start) return -1;
  end = strstr(start, "\"threads\": "); /* the last field of a row: the search stays in it */
  if (phase) {
    snprintf(key, sizeof key, "\"%s\": {", phase);
    start = strstr(start, key);
    if (!start || start > end) return 0;
  }
  snprintf(key, sizeof key, "\"%s\": ", field);
  at = strstr(start, key);
  return at && at < end ? strtol(at + strlen(key), NULL, 10) : -1;
}

/* Calls run by the build of metrics row `row`. */
static long calls(const char* json, const char* row) {
  return metric(json, row, "first_call", "count") + metric(json, row, "run", "count");
}

static kiln_runtime* runtime_in(const char* cache, int tiered) {
  kiln_config* config = NULL;
  kiln_runtime* rt = NULL;
  char metrics[512];
  snprintf(metrics, sizeof metrics, "%s/metrics.json", cache); /* a metrics file times every call */
  CHECK(kiln_config_from_env(&config) == KILN_OK);
  CHECK(kiln_config_set_cache_dir(config, cache) == KILN_OK);
  CHECK(kiln_config_set_metrics_file(config, metrics) == KILN_OK);
  CHECK(kiln_config_set_tiered(config, tiered) == KILN_OK);
  CHECK(kiln_runtime_create_from_config(config, &rt) == KILN_OK);
  kiln_config_destroy(config);
  CHECK(kiln_register_kernel(rt, kAxpz, "c_tiered_axpz.kiln", NULL) == KILN_OK);
  return rt;
}

static kiln_kernel resolve(kiln_runtime* rt, kiln_mode mode) {
  kiln_spec* spec = NULL;
  kiln_kernel k = NULL;
  CHECK(kiln_spec_create(&spec) == KILN_OK);
  CHECK(kiln_spec_set_int(spec, "start", 0) == KILN_OK && kiln_spec_set_int(spec, "end", kPoints) == KILN_OK);
  CHECK(kiln_spec_set_double(spec, "a", 1.0 / 3.0) == KILN_OK);
  CHECK(kiln_kernel_get(rt, "c_tiered_axpz", spec, mode, &k) == KILN_OK);
  kiln_spec_destroy(spec);
  return k;
}

/* out = a * x + out, from out = 0, by the build `mode` resolves to. */
static void run(kiln_runtime* rt, kiln_mode mode, double* out) {
  static double x[kPoints];
  const kiln_kernel k = resolve(rt, mode);
  kiln_arg args[2];
  int64_t extent[1] = {kPoints};
  int i;
  for (i = 0; i < kPoints; ++i) x[i] = 0.1 * i - 1.3, out[i] = 0.0;
  CHECK(kiln_array_c(out, KILN_F64, 1, extent, &args[0]) == KILN_OK);
  CHECK(kiln_array_c(x, KILN_F64, 1, extent, &args[1]) == KILN_OK);
  CHECK(kiln_call(k, args, 2) == KILN_OK);
}

static char* metrics_of(kiln_runtime* rt) {
  char* json = NULL;
  CHECK(kiln_metrics_json(rt, &json) == KILN_OK);
  return json ? json : calloc(1, 1);
}

int main(void) {
  char cache[] = "/tmp/kiln-c-tiered-XXXXXX";
  double specialised[kPoints], generic[kPoints];
  kiln_runtime* rt = NULL;
  char* json = NULL;
  int i;
  if (!mkdtemp(cache)) return 2;

  rt = runtime_in(cache, 1);
  CHECK(resolve(rt, KILN_SPECIALISED) != NULL);   /* a miss: the generic build compiled, the specialised queued */
  CHECK(kiln_wait_for_specialised(rt) == KILN_OK); /* the specialised build is in */
  for (i = 0; i < 3; ++i) run(rt, KILN_SPECIALISED, specialised);
  json = metrics_of(rt);
  CHECK(metric(json, "c_tiered_axpz (generic)", NULL, "compiles") == 1); /* nothing asked for it but the miss */
  CHECK(calls(json, "c_tiered_axpz (generic)") == 0);
  CHECK(metric(json, "c_tiered_axpz", NULL, "compiles") == 1);
  CHECK(calls(json, "c_tiered_axpz") == 3);
  kiln_free(json);
  /* Its own build at Config::opt_level: the stand-in was compiled at tiered_opt_level (O1), another entry. */
  run(rt, KILN_GENERIC, generic);
  json = metrics_of(rt);
  CHECK(metric(json, "c_tiered_axpz (generic)", NULL, "compiles") == 2);
  CHECK(calls(json, "c_tiered_axpz (generic)") == 1);
  CHECK(memcmp(specialised, generic, sizeof specialised) == 0);
  kiln_free(json);
  CHECK_FAILS(kiln_wait_for_specialised(NULL), KILN_ERROR_INVALID_ARGUMENT, "kiln_wait_for_specialised");
  CHECK_FAILS(kiln_config_set_tiered(NULL, 1), KILN_ERROR_INVALID_ARGUMENT, "kiln_config_set_tiered");
  kiln_runtime_destroy(rt);

  /* Off: a miss of another value compiles its own build alone, and the wait has nothing to wait for. */
  {
    char other[600];
    snprintf(other, sizeof other, "%s/off", cache);
    rt = runtime_in(other, 0);
    run(rt, KILN_SPECIALISED, specialised);
    CHECK(kiln_wait_for_specialised(rt) == KILN_OK);
    json = metrics_of(rt);
    CHECK(metric(json, "c_tiered_axpz (generic)", NULL, "compiles") == -1);
    CHECK(metric(json, "c_tiered_axpz", NULL, "compiles") == 1);
    CHECK(calls(json, "c_tiered_axpz") == 1);
    CHECK(memcmp(specialised, generic, sizeof specialised) == 0);
    kiln_free(json);
    kiln_runtime_destroy(rt);
  }
  {
    char command[64];
    snprintf(command, sizeof command, "rm -rf %s", cache);
    if (system(command) != 0) fprintf(stderr, "cannot remove %s\n", cache);
  }
  if (failures == 0) printf("c_tiered_test: every check passed\n");
  return failures == 0 ? 0 : 1;
}
