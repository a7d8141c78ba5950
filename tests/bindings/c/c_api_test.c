/* The C ABI from C99 (-std=c99 -Wall -Wextra -Werror -pedantic): a user
 * kernel registered, specialised, resolved, called and checked value by
 * value; every error path returns its status and a message that names the
 * kernel, the argument or the cause; nothing aborts. Exits non-zero when a
 * check fails, saying which. */
#define _POSIX_C_SOURCE 200809L
#include <kiln/kiln.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "c_checks.h"

static const char* kAxpy =
    "#pragma kiln kernel c_axpy\n"
    "#pragma kiln array double y[2]\n"
    "#pragma kiln array double x[2]\n"
    "#pragma kiln scalar double a\n"
    "#pragma kiln domain n_start n_end k_start k_end\n"
    "#pragma kiln static bool twice\n"
    "kiln::for_each_point(y, n_start, n_end, k_start, k_end, [&](kiln::index_t c, kiln::index_t k) {\n"
    "  y(c, k) += (twice ? 2.0 : 1.0) * a * x(c, k);\n"
    "});\n";

static const char* kBroken =
    "#pragma kiln kernel c_broken\n"
    "#pragma kiln array double y[1]\n"
    "#pragma kiln domain n\n"
    "kiln::for_each_column(0, n, [&](kiln::index_t c) { y(c) = no_such_name; });\n";

static void* fail_in_another_thread(void* unused) {
  (void)unused;
  kiln_spec* spec = NULL;
  if (kiln_spec_create(&spec) != KILN_OK) return NULL;
  (void)kiln_spec_set_strides(spec, "x", NULL, 2); /* this thread's error only */
  kiln_spec_destroy(spec);
  return NULL;
}

int main(void) {
  kiln_runtime* rt = NULL;
  kiln_config* config = NULL;
  kiln_spec* spec = NULL;
  kiln_kernel k = NULL;
  const char* name = NULL;
  enum { N = 5, K = 3 };
  double x[K][N], y[K][N];
  int64_t shape[2] = {N, K};
  kiln_arg args[3];
  int c, kk;

  char cache[] = "/tmp/kiln-c-api-XXXXXX"; /* a fresh cache: the first resolution compiles */
  if (!mkdtemp(cache) || setenv("KILN_CACHE_DIR", cache, 1) != 0) return 2;

  CHECK(strcmp(kiln_last_error(), "") == 0);
  CHECK(kiln_config_from_env(&config) == KILN_OK);
  CHECK(kiln_config_set_build_threads(config, 1) == KILN_OK);
  CHECK(kiln_runtime_create_from_config(config, &rt) == KILN_OK);
  kiln_config_destroy(config);
  CHECK(kiln_register_kernel(rt, kAxpy, "c_axpy.kiln", &name) == KILN_OK);
  CHECK(name != NULL && strcmp(name, "c_axpy") == 0);

  /* The declaration, as a binding reads it. */
  {
    kiln_declaration* d = NULL;
    const char* arg_name = NULL;
    kiln_type type = KILN_I32;
    int rank = -1, domain = -1;
    CHECK(kiln_declaration_get(rt, "c_axpy", &d) == KILN_OK);
    CHECK(kiln_declaration_argument_count(d) == 3);
    CHECK(kiln_declaration_argument(d, 2, &arg_name, &type, &rank) == KILN_OK);
    CHECK(strcmp(arg_name, "a") == 0 && type == KILN_F64 && rank == 0);
    CHECK(kiln_declaration_parameter_count(d) == 5);
    CHECK(kiln_declaration_parameter(d, 4, &arg_name, &type, &domain) == KILN_OK);
    CHECK(strcmp(arg_name, "twice") == 0 && type == KILN_BOOL && domain == 0);
    CHECK_FAILS(kiln_declaration_argument(d, 3, &arg_name, &type, &rank), KILN_ERROR_INVALID_ARGUMENT, "c_axpy");
    kiln_declaration_destroy(d);
  }

  /* y(c, k) += 2 * 0.5 * x(c, k) on rows 1..3 of N, every level; Fortran order. */
  for (kk = 0; kk < K; ++kk)
    for (c = 0; c < N; ++c) x[kk][c] = c + 10.0 * kk, y[kk][c] = 1.0;
  CHECK(kiln_array_f(y, KILN_F64, 2, shape, &args[0]) == KILN_OK);
  CHECK(kiln_array_f(x, KILN_F64, 2, shape, &args[1]) == KILN_OK);
  args[2] = kiln_scalar_f64(0.5);
  CHECK(args[0].strides[0] == 1 && args[0].strides[1] == N);
  CHECK(kiln_spec_create(&spec) == KILN_OK);
  CHECK(kiln_spec_set_int(spec, "n_start", 1) == KILN_OK);
  CHECK(kiln_spec_set_int(spec, "n_end", 4) == KILN_OK);
  CHECK(kiln_spec_set_int(spec, "k_start", 0) == KILN_OK);
  CHECK(kiln_spec_set_int(spec, "k_end", K) == KILN_OK);
  CHECK(kiln_spec_set_bool(spec, "twice", 1) == KILN_OK);
  CHECK(kiln_spec_set_strides(spec, "y", args[0].strides, 2) == KILN_OK);
  CHECK(kiln_kernel_get(rt, "c_axpy", spec, KILN_SPECIALISED, &k) == KILN_OK);
  CHECK(k != NULL);
  CHECK(kiln_call(k, args, 3) == KILN_OK);
  for (kk = 0; kk < K; ++kk)
    for (c = 0; c < N; ++c) CHECK(y[kk][c] == (c >= 1 && c < 4 ? 1.0 + x[kk][c] : 1.0));
  {
    /* The cell bounds read at run time: another range is another handle on the same binary. */
    kiln_spec* ranged = NULL;
    kiln_kernel r1 = NULL, r2 = NULL;
    CHECK(kiln_spec_create(&ranged) == KILN_OK);
    CHECK(kiln_spec_set_int(ranged, "n_start", 0) == KILN_OK);
    CHECK(kiln_spec_set_int(ranged, "n_end", 1) == KILN_OK);
    CHECK(kiln_spec_set_int(ranged, "k_start", 0) == KILN_OK);
    CHECK(kiln_spec_set_int(ranged, "k_end", K) == KILN_OK);
    CHECK(kiln_spec_set_bool(ranged, "twice", 1) == KILN_OK);
    CHECK(kiln_spec_set_run_time(ranged, "n_start") == KILN_OK);
    CHECK(kiln_spec_set_run_time(ranged, "n_end") == KILN_OK);
    CHECK(kiln_kernel_get(rt, "c_axpy", ranged, KILN_SPECIALISED, &r1) == KILN_OK);
    CHECK(kiln_spec_set_int(ranged, "n_start", 4) == KILN_OK); /* keeps its mark */
    CHECK(kiln_spec_set_int(ranged, "n_end", N) == KILN_OK);
    CHECK(kiln_kernel_get(rt, "c_axpy", ranged, KILN_SPECIALISED, &r2) == KILN_OK);
    CHECK(r1 != r2);
    CHECK(kiln_call(r1, args, 3) == KILN_OK && kiln_call(r2, args, 3) == KILN_OK);
    for (kk = 0; kk < K; ++kk) /* cells 1..3 from k before, 0 from r1, 4.. from r2 */
      for (c = 0; c < N; ++c) CHECK(y[kk][c] == 1.0 + x[kk][c]);
    for (kk = 0; kk < K; ++kk) /* back to what the checks below start from */
      for (c = 0; c < N; ++c)
        if (c == 0 || c >= 4) y[kk][c] = 1.0;
    CHECK_FAILS(kiln_spec_set_run_time(ranged, "nowhere"), KILN_ERROR_SPEC, "set its value first");
    CHECK_FAILS(kiln_spec_set_run_time(NULL, "n_end"), KILN_ERROR_INVALID_ARGUMENT, "NULL");
    kiln_spec_destroy(ranged);
  }
  {
    /* Many at once, generic and specialised; a repeated request is a memory hit. */
    kiln_request requests[2];
    kiln_kernel got[2] = {NULL, NULL};
    const kiln_arg* pointers[3];
    requests[0].name = "c_axpy", requests[0].spec = spec, requests[0].mode = KILN_GENERIC;
    requests[1].name = "c_axpy", requests[1].spec = spec, requests[1].mode = KILN_SPECIALISED;
    CHECK(kiln_kernels_get(rt, requests, 2, got) == KILN_OK);
    CHECK(got[1] == k && got[0] != NULL && got[0] != k);
    pointers[0] = &args[0], pointers[1] = &args[1], pointers[2] = &args[2];
    CHECK(kiln_call_pointers(got[0], pointers, 3) == KILN_OK);
    CHECK(y[1][2] == 1.0 + 2.0 * x[1][2] && y[1][0] == 1.0);
  }

  {
    /* ICON's blocks: y and x as (nproma 2, K, 3 blocks), the domain (cells
     * 1..3) across two blocks; the kernel takes flat indices (kiln::index_t),
     * which a blocked view splits. Then idx/blk into a flat table. */
    double yb[3][K][2], xb[3][K][2];
    int64_t bshape[3] = {2, K, 3};
    kiln_arg bargs[3];
    kiln_spec* blocked = NULL;
    kiln_kernel kb = NULL;
    int jb, jc;
    for (jb = 0; jb < 3; ++jb)
      for (kk = 0; kk < K; ++kk)
        for (jc = 0; jc < 2; ++jc) yb[jb][kk][jc] = 1.0, xb[jb][kk][jc] = 2 * jb + jc + 10.0 * kk;
    CHECK(kiln_array_f(yb, KILN_F64, 3, bshape, &bargs[0]) == KILN_OK);
    CHECK(kiln_array_f(xb, KILN_F64, 3, bshape, &bargs[1]) == KILN_OK);
    bargs[2] = kiln_scalar_f64(0.5);
    CHECK(kiln_spec_create(&blocked) == KILN_OK);
    CHECK(kiln_spec_set_int(blocked, "n_start", 1) == KILN_OK);
    CHECK(kiln_spec_set_int(blocked, "n_end", 4) == KILN_OK);
    CHECK(kiln_spec_set_int(blocked, "k_start", 0) == KILN_OK);
    CHECK(kiln_spec_set_int(blocked, "k_end", K) == KILN_OK);
    CHECK(kiln_spec_set_bool(blocked, "twice", 1) == KILN_OK);
    CHECK(kiln_spec_set_blocked_strides(blocked, "y", 2, bargs[0].strides, 3) == KILN_OK);
    CHECK(kiln_spec_set_blocked(blocked, "x", 2) == KILN_OK);
    CHECK(kiln_kernel_get(rt, "c_axpy", blocked, KILN_SPECIALISED, &kb) == KILN_OK);
    CHECK(kiln_call(kb, bargs, 3) == KILN_OK);
    for (jb = 0; jb < 3; ++jb)
      for (kk = 0; kk < K; ++kk)
        for (jc = 0; jc < 2; ++jc) {
          const int cell = 2 * jb + jc;
          CHECK(yb[jb][kk][jc] == (cell >= 1 && cell < 4 ? 1.0 + xb[jb][kk][jc] : 1.0));
        }
    CHECK_FAILS(kiln_call(kb, args, 3), KILN_ERROR_ARGUMENT, "specialised blocked");
    CHECK_FAILS(kiln_spec_set_blocked_strides(blocked, "y", 2, bargs[0].strides, 1), KILN_ERROR_INVALID_ARGUMENT,
                "rank 1 is not 2 to 4");
    /* Fixed like the view: nproma, strides and the block count (3). */
    CHECK(kiln_spec_set_blocked_like(blocked, "x", &bargs[1]) == KILN_OK);
    CHECK(kiln_kernel_get(rt, "c_axpy", blocked, KILN_SPECIALISED, &kb) == KILN_OK);
    CHECK(kiln_call(kb, bargs, 3) == KILN_OK);
    bargs[1].shape[2] = 2; /* the first two blocks of the same array: another count */
    CHECK_FAILS(kiln_call(kb, bargs, 3), KILN_ERROR_ARGUMENT, "2 blocks (its last extent), specialised for 3");
    CHECK_FAILS(kiln_spec_set_blocked_like(blocked, "x", NULL), KILN_ERROR_INVALID_ARGUMENT, "NULL");
    CHECK(kiln_spec_set_blocked(blocked, "x", 0) == KILN_OK); /* checked when bound: */
    CHECK_FAILS(kiln_kernel_get(rt, "c_axpy", blocked, KILN_SPECIALISED, &kb), KILN_ERROR_SPEC, "nproma must be");
    kiln_spec_destroy(blocked);
  }
  {
    /* Neighbour j of 3 entities in blocks of 2: idx(2, 2, 2), blk(2, 2, 2). */
    int32_t idx[2][2][2] = {{{1, 2}, {1, 0}}, {{2, 2}, {0, 0}}}; /* [j][jb][jc] */
    int32_t blk[2][2][2] = {{{1, 1}, {2, 0}}, {{2, 1}, {0, 0}}};
    int32_t table[2][3] = {{7, 7, 7}, {7, 7, 7}}; /* [j][e]: Fortran order (3, 2) */
    int64_t ishape[3] = {2, 2, 2}, tshape[2] = {3, 2};
    kiln_arg iv, bv, tv;
    CHECK(kiln_array_f(idx, KILN_I32, 3, ishape, &iv) == KILN_OK);
    CHECK(kiln_array_f(blk, KILN_I32, 3, ishape, &bv) == KILN_OK);
    CHECK(kiln_array_f(table, KILN_I32, 2, tshape, &tv) == KILN_OK);
    CHECK(kiln_flat_table(&iv, &bv, &tv) == KILN_OK);
    CHECK(table[0][0] == 0 && table[0][1] == 1 && table[0][2] == 2);
    CHECK(table[1][0] == 3 && table[1][1] == 1 && table[1][2] == -1);
    blk[1][1][0] = 1; /* idx 0 with blk 1: broken */
    CHECK_FAILS(kiln_flat_table(&iv, &bv, &tv), KILN_ERROR_ARGUMENT, "idx(1, 2, 2) = 0 with blk(1, 2, 2) = 1");
    CHECK_FAILS(kiln_flat_table(&iv, NULL, &tv), KILN_ERROR_INVALID_ARGUMENT, "NULL");
  }

  /* Errors: each a status and a message naming what is wrong. */
  CHECK_FAILS(kiln_kernel_get(rt, "no_such_kernel", spec, KILN_SPECIALISED, &k), KILN_ERROR_UNKNOWN_KERNEL,
              "no_such_kernel");
  CHECK_FAILS(kiln_call(k, args, 2), KILN_ERROR_ARGUMENT, "c_axpy");
  {
    kiln_arg wrong[3];
    int64_t other[2] = {K, N};
    wrong[0] = args[0], wrong[2] = args[2];
    CHECK(kiln_array_c(x, KILN_F64, 2, other, &wrong[1]) == KILN_OK);
    CHECK(kiln_call(k, wrong, 3) == KILN_OK); /* x's strides were not specialised */
    CHECK(kiln_array_c(y, KILN_F64, 2, other, &wrong[0]) == KILN_OK);
    CHECK_FAILS(kiln_call(k, wrong, 3), KILN_ERROR_ARGUMENT, "'y'"); /* y's were */
    wrong[2] = kiln_scalar_i32(1);
    CHECK_FAILS(kiln_call(k, wrong, 3), KILN_ERROR_ARGUMENT, "'a'");
  }
  {
    kiln_spec* partial = NULL;
    CHECK(kiln_spec_create(&partial) == KILN_OK);
    CHECK(kiln_spec_set_int(partial, "n_start", 0) == KILN_OK);
    CHECK_FAILS(kiln_kernel_get(rt, "c_axpy", partial, KILN_SPECIALISED, &k), KILN_ERROR_SPEC, "n_end");
    CHECK(kiln_spec_set_double(partial, "n_end", 4.5) == KILN_OK);
    CHECK_FAILS(kiln_kernel_get(rt, "c_axpy", partial, KILN_SPECIALISED, &k), KILN_ERROR_SPEC, "n_end");
    kiln_spec_destroy(partial);
  }
  CHECK(kiln_register_kernel(rt, kBroken, "c_broken.kiln", NULL) == KILN_OK);
  {
    kiln_spec* n = NULL;
    CHECK(kiln_spec_create(&n) == KILN_OK);
    CHECK(kiln_spec_set_int(n, "n", 4) == KILN_OK);
    CHECK_FAILS(kiln_kernel_get(rt, "c_broken", n, KILN_SPECIALISED, &k), KILN_ERROR_COMPILE, "c_broken.kiln:4:");
    CHECK_FAILS(kiln_precompile(rt, "c_axpy", spec, KILN_CUDA, "sm_1", KILN_SPECIALISED, NULL), KILN_ERROR, "sm_1");
    kiln_spec_destroy(n);
  }
  CHECK_FAILS(kiln_register_kernel(rt, "#pragma kiln array double y[9]\n", "bad.kiln", NULL), KILN_ERROR_KERNEL_SOURCE,
              "bad.kiln:1");
  CHECK(kiln_register_kernel(rt, kAxpy, "again.kiln", NULL) == KILN_OK); /* the same text: nothing changes */
  CHECK_FAILS(kiln_register_kernel_file(rt, "/no/such/file.kiln", NULL), KILN_ERROR_KERNEL_SOURCE, "/no/such/file.kiln");
  CHECK_FAILS(kiln_kernel_get(rt, NULL, spec, KILN_SPECIALISED, &k), KILN_ERROR_INVALID_ARGUMENT, "NULL");
  CHECK_FAILS(kiln_kernel_get(rt, "c_axpy", spec, (kiln_mode)7, &k), KILN_ERROR_INVALID_ARGUMENT, "kiln_mode");
  CHECK_FAILS(kiln_call(NULL, args, 3), KILN_ERROR_INVALID_ARGUMENT, "NULL");
  CHECK_FAILS(kiln_array(x, KILN_F64, 5, shape, shape, &args[1]), KILN_ERROR_INVALID_ARGUMENT, "rank 5");
  CHECK_FAILS(kiln_array(x, (kiln_type)9, 2, shape, shape, &args[1]), KILN_ERROR_INVALID_ARGUMENT, "kiln_type");
  /* A view of NULL with elements is refused by every constructor (kiln_call
   * would write through it); NULL with an extent 0 holds nothing and is a view. */
  {
    const int64_t empty[2] = {0, 3}, negative[2] = {4, -1}, huge[2] = {INT64_MAX / 2, 3};
    kiln_arg view;
    CHECK_FAILS(kiln_array_c(NULL, KILN_F64, 2, shape, &view), KILN_ERROR_INVALID_ARGUMENT, "data is NULL");
    CHECK_FAILS(kiln_array_f(NULL, KILN_F64, 2, shape, &view), KILN_ERROR_INVALID_ARGUMENT, "data is NULL");
    CHECK_FAILS(kiln_array(NULL, KILN_F64, 2, shape, shape, &view), KILN_ERROR_INVALID_ARGUMENT, "data is NULL");
    CHECK(kiln_array_c(NULL, KILN_F64, 2, empty, &view) == KILN_OK && view.data == NULL && view.shape[0] == 0);
    CHECK_FAILS(kiln_array_c(x, KILN_F64, 2, negative, &view), KILN_ERROR_INVALID_ARGUMENT, "extent 1 is -1");
    CHECK_FAILS(kiln_array_f(x, KILN_F64, 2, huge, &view), KILN_ERROR_INVALID_ARGUMENT, "64 bits");
    CHECK_FAILS(kiln_array_f(x, KILN_F64, 2, NULL, &view), KILN_ERROR_INVALID_ARGUMENT, "NULL");
  }
  CHECK_FAILS(kiln_metrics_write(rt, "/no/such/folder/m.json"), KILN_ERROR, "/no/such/folder/m.json");

  /* The message is this thread's: another thread's failure leaves it. */
  {
    pthread_t other;
    CHECK(pthread_create(&other, NULL, fail_in_another_thread, NULL) == 0);
    CHECK(pthread_join(other, NULL) == 0);
    CHECK(strstr(kiln_last_error(), "/no/such/folder/m.json") != NULL);
  }

  /* Metrics: one compile of each build, as JSON. */
  {
    char* json = NULL;
    CHECK(kiln_metrics_json(rt, &json) == KILN_OK);
    CHECK(json != NULL && strstr(json, "\"c_axpy\"") != NULL && strstr(json, "\"compiles\"") != NULL);
    kiln_free(json);
  }
  kiln_spec_destroy(spec);
  kiln_runtime_destroy(rt);
  {
    char command[64];
    snprintf(command, sizeof command, "rm -rf %s", cache);
    if (system(command) != 0) fprintf(stderr, "cannot remove %s\n", cache);
  }
  if (failures == 0) printf("c_api_test: every check passed\n");
  return failures == 0 ? 0 : 1;
}
