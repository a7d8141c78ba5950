/* bool arrays from C99: _Bool arrays (one byte each, as the kernel's C++
 * bool) passed as KILN_BOOL views, a mask read and a mask written, value by
 * value; a double array refused for a bool argument and a bool array for a
 * double one, naming the argument and both types; an element-type code
 * kiln has not (an int8 array has none) refused by kiln_array. */
#define _POSIX_C_SOURCE 200809L
#include <kiln/kiln.h>
#include <stdbool.h>
#include <stdlib.h>

#include "c_checks.h"

static const char* kMasked =
    "#pragma kiln kernel c_masked_floor\n"
    "#pragma kiln domain n\n"
    "#pragma kiln array double x[n]\n"
    "#pragma kiln array bool keep[n]\n"
    "#pragma kiln array bool changed[n]\n"
    "kiln::for_each_column(0, n, [&](kiln::index_t c) {\n"
    "  changed(c) = !keep(c) && x(c) < 0.0;\n"
    "  if (changed(c)) x(c) = 0.0;\n"
    "});\n";

enum { N = 6 };

int main(void) {
  kiln_runtime* rt = NULL;
  kiln_spec* spec = NULL;
  kiln_kernel k = NULL;
  double x[N] = {-1.0, -2.0, 3.0, -4.0, 5.0, -6.0}, other[N] = {0};
  bool keep[N] = {true, false, false, true, true, false}, changed[N] = {0};
  const bool want[N] = {false, true, false, false, false, true};
  const double want_x[N] = {-1.0, 0.0, 3.0, -4.0, 5.0, 0.0};
  int64_t shape[1] = {N};
  kiln_arg args[3];
  int i;

  char cache[] = "/tmp/kiln-c-bool-XXXXXX"; /* a fresh cache */
  if (!mkdtemp(cache) || setenv("KILN_CACHE_DIR", cache, 1) != 0) return 2;
  CHECK(kiln_runtime_create(&rt) == KILN_OK);
  CHECK(kiln_register_kernel(rt, kMasked, "c_masked_floor.kiln", NULL) == KILN_OK);
  {
    kiln_declaration* d = NULL;
    const char* name = NULL;
    kiln_type type = KILN_F64;
    int rank = 0;
    CHECK(kiln_declaration_get(rt, "c_masked_floor", &d) == KILN_OK);
    CHECK(kiln_declaration_argument(d, 1, &name, &type, &rank) == KILN_OK);
    CHECK(type == KILN_BOOL && rank == 1);
    kiln_declaration_destroy(d);
  }
  CHECK(kiln_spec_create(&spec) == KILN_OK);
  CHECK(kiln_spec_set_int(spec, "n", N) == KILN_OK);
  CHECK(kiln_kernel_get(rt, "c_masked_floor", spec, KILN_SPECIALISED, &k) == KILN_OK);

  CHECK(kiln_array_c(x, KILN_F64, 1, shape, &args[0]) == KILN_OK);
  CHECK(kiln_array_c(keep, KILN_BOOL, 1, shape, &args[1]) == KILN_OK);
  CHECK(kiln_array_c(changed, KILN_BOOL, 1, shape, &args[2]) == KILN_OK);
  CHECK(kiln_call(k, args, 3) == KILN_OK);
  for (i = 0; i < N; ++i) {
    CHECK(changed[i] == want[i]);
    CHECK(x[i] == want_x[i]);
  }

  /* A double array where a bool array goes, and a bool array where a double one goes. */
  CHECK(kiln_array_c(other, KILN_F64, 1, shape, &args[1]) == KILN_OK);
  CHECK_FAILS(kiln_call(k, args, 3), KILN_ERROR_ARGUMENT,
              "argument 1 'keep': expected a bool array of rank 1, got a double array of rank 1");
  CHECK(kiln_array_c(keep, KILN_BOOL, 1, shape, &args[1]) == KILN_OK);
  CHECK(kiln_array_c(keep, KILN_BOOL, 1, shape, &args[0]) == KILN_OK);
  CHECK_FAILS(kiln_call(k, args, 3), KILN_ERROR_ARGUMENT,
              "argument 0 'x': expected a double array of rank 1, got a bool array of rank 1");
  /* No code past KILN_BOOL: an int8 array has no kiln type. */
  CHECK_FAILS(kiln_array_c(keep, (kiln_type)(KILN_BOOL + 1), 1, shape, &args[1]), KILN_ERROR_INVALID_ARGUMENT,
              "kiln_type must be one of");

  kiln_spec_destroy(spec);
  kiln_runtime_destroy(rt);
  return failures != 0;
}
