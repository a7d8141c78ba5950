/* The C setters of issue 33 (items 10 and 11): each refuses what its KILN_*
 * variable refuses (a garbage log level, 1,000,000 build threads, 2000
 * threads, an unknown CPU, a gather choice other than auto, on or off), with
 * KILN_ERROR_INVALID_ARGUMENT and a message naming the setter, the field and
 * the bound, and leaves the config as it was; check mode, threads, the target
 * CPU and the gather choice can be set without the environment; a call with a
 * count no kernel takes (SIZE_MAX) is refused by name. Also: a folder passed
 * to kiln_register_kernel_file. */
#include <kiln/kiln.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "c_checks.h"

static const char* kScale =
    "#pragma kiln kernel c_config_scale\n"
    "#pragma kiln array double y[1]\n"
    "#pragma kiln domain n\n"
    "kiln::for_each_column(0, n, [&](kiln::index_t c) { y(c) *= 2.0; });\n";

int main(void) {
  kiln_config* config = NULL;
  kiln_runtime* rt = NULL;
  kiln_spec* spec = NULL;
  kiln_kernel k = NULL;
  kiln_arg y_arg;
  double y[3] = {1, 2, 3};
  int64_t extent[1] = {3};
  const char* name = NULL;

  CHECK(kiln_config_from_env(&config) == KILN_OK);
  /* Refused as the environment refuses them, naming the setter and the bound. */
  CHECK_FAILS(kiln_config_set_log_level(config, "garbage"), KILN_ERROR_INVALID_ARGUMENT,
              "kiln_config_set_log_level: Config::log_level 'garbage': expected trace, debug");
  CHECK_FAILS(kiln_config_set_build_threads(config, 1000000), KILN_ERROR_INVALID_ARGUMENT,
              "build_threads 1000000: expected 0 (the default) to 256 (as KILN_BUILD_THREADS takes it)");
  CHECK_FAILS(kiln_config_set_threads(config, 2000), KILN_ERROR_INVALID_ARGUMENT,
              "threads 2000: expected 0 (the default) to 1024 (as KILN_THREADS takes it)");
  CHECK_FAILS(kiln_config_set_threads(config, -1), KILN_ERROR_INVALID_ARGUMENT, "KILN_THREADS");
  CHECK_FAILS(kiln_config_set_target_cpu(config, "pentium-9000"), KILN_ERROR_INVALID_ARGUMENT,
              "Config::target_cpu 'pentium-9000': expected native, an x86-64 level");
  CHECK_FAILS(kiln_config_set_gather(config, "yes"), KILN_ERROR_INVALID_ARGUMENT,
              "kiln_config_set_gather: Config::gather 'yes': expected auto, on or off (as KILN_GATHER takes it)");
  CHECK_FAILS(kiln_config_set_gather(config, NULL), KILN_ERROR_INVALID_ARGUMENT, "gather must not be NULL");
  /* Accepted where the environment accepts them. */
  CHECK(kiln_config_set_log_level(config, "off") == KILN_OK);
  CHECK(kiln_config_set_build_threads(config, 2) == KILN_OK);
  CHECK(kiln_config_set_threads(config, 1) == KILN_OK);
  CHECK(kiln_config_set_target_cpu(config, "native") == KILN_OK);
  CHECK(kiln_config_set_gather(config, "on") == KILN_OK);
  CHECK(kiln_config_set_gather(config, "off") == KILN_OK);
  CHECK(kiln_config_set_check(config, 1) == KILN_OK);
  CHECK(kiln_runtime_create_from_config(config, &rt) == KILN_OK);
  kiln_config_destroy(config);

  /* A folder is not a kernel file. */
  CHECK_FAILS(kiln_register_kernel_file(rt, "/tmp", &name), KILN_ERROR_KERNEL_SOURCE, "kernel file /tmp is a folder");

  CHECK(kiln_register_kernel(rt, kScale, "c_config_scale.kiln", &name) == KILN_OK);
  CHECK(kiln_spec_create(&spec) == KILN_OK);
  CHECK(kiln_spec_set_int(spec, "n", 3) == KILN_OK);
  CHECK(kiln_kernel_get(rt, "c_config_scale", spec, KILN_SPECIALISED, &k) == KILN_OK);
  CHECK(kiln_array_c(y, KILN_F64, 1, extent, &y_arg) == KILN_OK);
  CHECK(kiln_call(k, &y_arg, 1) == KILN_OK);
  CHECK(y[0] == 2 && y[2] == 6);
  /* A count no kernel takes: refused by name, not an internal error. */
  CHECK_FAILS(kiln_call(k, &y_arg, SIZE_MAX), KILN_ERROR_ARGUMENT,
              "kernel 'c_config_scale' takes 1 arguments (y), got 18446744073709551615");
  kiln_spec_destroy(spec);
  kiln_runtime_destroy(rt);
  if (failures == 0) printf("c_config_test: ok\n");
  return failures == 0 ? 0 : 1;
}
