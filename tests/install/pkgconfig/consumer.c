/* Built by a plain Makefile against the installed kiln (pkg-config kiln):
 * resolves and calls a shipped kernel, and says what failed otherwise. */
#include <kiln/kiln.h>
#include <stdio.h>

int main(void) {
  kiln_runtime* rt = NULL;
  kiln_spec* spec = NULL;
  kiln_kernel k = NULL;
  double theta_v[4] = {300, 300, 300, 300}, exner[4] = {1, 1, 1, 1}, area[2] = {1, 1}, z_temp[4] = {0, 0, 0, 0};
  int64_t field[2] = {2, 2}, cells[1] = {2};
  kiln_arg args[4];
  if (kiln_runtime_create(&rt) != KILN_OK || kiln_spec_create(&spec) != KILN_OK ||
      kiln_spec_set_int(spec, "horizontal_start", 0) != KILN_OK || kiln_spec_set_int(spec, "horizontal_end", 2) != KILN_OK ||
      kiln_spec_set_int(spec, "vertical_start", 0) != KILN_OK || kiln_spec_set_int(spec, "vertical_end", 2) != KILN_OK ||
      kiln_spec_set_double(spec, "rd_o_cvd", 0.4) != KILN_OK ||
      kiln_array_c(theta_v, KILN_F64, 2, field, &args[0]) != KILN_OK ||
      kiln_array_c(exner, KILN_F64, 2, field, &args[1]) != KILN_OK ||
      kiln_array_c(area, KILN_F64, 1, cells, &args[2]) != KILN_OK ||
      kiln_array_c(z_temp, KILN_F64, 2, field, &args[3]) != KILN_OK ||
      kiln_kernel_get(rt, "update_theta_and_exner", spec, KILN_SPECIALISED, &k) != KILN_OK ||
      kiln_call(k, args, 4) != KILN_OK) {
    fprintf(stderr, "c_consumer: %s\n", kiln_last_error());
    return 1;
  }
  kiln_spec_destroy(spec);
  kiln_runtime_destroy(rt);
  printf("c_consumer: ok\n");
  return 0;
}
