! Built by a plain Makefile against the installed kiln (pkg-config kiln-fortran).
program f_consumer
  use, intrinsic :: iso_c_binding
  use kiln
  implicit none
  type(kiln_runtime) :: rt
  type(kiln_spec) :: spec
  type(kiln_kernel) :: k
  real(c_double), target :: theta_v(2, 2), exner(2, 2), area(2), z_temp(2, 2)
  theta_v = 300
  exner = 1
  area = 1
  z_temp = 0
  call kiln_init(rt)
  call kiln_init(spec)
  call kiln_set(spec, 'horizontal_start', 0)
  call kiln_set(spec, 'horizontal_end', 2)
  call kiln_set(spec, 'vertical_start', 0)
  call kiln_set(spec, 'vertical_end', 2)
  call kiln_set(spec, 'rd_o_cvd', 0.4_c_double)
  call kiln_get(rt, 'update_theta_and_exner', spec, k)
  call kiln_call(k, [kiln_array(theta_v), kiln_array(exner), kiln_array(area), kiln_array(z_temp)])
  call kiln_finalize(spec)
  call kiln_finalize(rt)
  print '(a)', 'f_consumer: ok'
end program f_consumer
