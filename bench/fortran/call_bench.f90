! kiln_fortran_call_bench: the cost of a kiln call from Fortran against a
! call of the same kernel compiled ahead of time by gfortran, on a one-point
! domain (so the call is all there is), alternated over rounds; medians.
! Issue 17's target: kiln's call costs at most 50 ns more. Informational:
! printed, never asserted. Run with KILN_CACHE_DIR set (any folder).
program call_bench
  use, intrinsic :: iso_c_binding
  use kiln
  use reference_kernels, only: reference => update_theta_and_exner
  implicit none
  integer, parameter :: calls = 2000000, rounds = 9
  real(c_double), target :: theta_v(1, 1), exner(1, 1), area(1), z_temp(1, 1)
  type(kiln_runtime) :: rt
  type(kiln_spec) :: spec
  type(kiln_kernel) :: k
  type(kiln_arg) :: args(4)
  real(c_double) :: kiln_ns(rounds), inside_ns(rounds), fortran_ns(rounds), rd_o_cvd
  integer :: r, i
  integer(8) :: t0, t1, rate
  theta_v = 300
  exner = 1
  area = 1
  z_temp = 0  ! the values stay as they are: every call computes the same
  rd_o_cvd = 0.4_c_double
  call kiln_init(rt)
  call kiln_init(spec)
  call kiln_set(spec, 'horizontal_start', 0)
  call kiln_set(spec, 'horizontal_end', 1)
  call kiln_set(spec, 'vertical_start', 0)
  call kiln_set(spec, 'vertical_end', 1)
  call kiln_set(spec, 'rd_o_cvd', rd_o_cvd)
  call kiln_get(rt, 'update_theta_and_exner', spec, k)
  args = [kiln_array(theta_v), kiln_array(exner), kiln_array(area), kiln_array(z_temp)]
  call system_clock(count_rate=rate)
  do r = 1, rounds
    call system_clock(t0)
    do i = 1, calls
      call kiln_call(k, args)
    end do
    call system_clock(t1)
    kiln_ns(r) = real(t1 - t0, c_double) / rate * 1e9_c_double / calls
    call system_clock(t0)
    do i = 1, calls
      call reference(theta_v, exner, area, z_temp, 0, 1, 0, 1, rd_o_cvd)
    end do
    call system_clock(t1)
    fortran_ns(r) = real(t1 - t0, c_double) / rate * 1e9_c_double / calls
    ! The pattern of a first program: the views built inside every call
    ! (docs/manual/deploying.md says what it costs). A tenth of the calls: it is slower.
    call system_clock(t0)
    do i = 1, calls / 10
      call kiln_call(k, [kiln_array(theta_v), kiln_array(exner), kiln_array(area), kiln_array(z_temp)])
    end do
    call system_clock(t1)
    inside_ns(r) = real(t1 - t0, c_double) / rate * 1e9_c_double / (calls / 10)
  end do
  print '(a)', 'call of update_theta_and_exner on one point, from Fortran (median of 9 rounds of 2e6 calls)'
  print '(a,f8.2,a)', '  kiln_call (arguments built once)        ', median(kiln_ns), ' ns'
  print '(a,f8.2,a)', '  kiln_call (views built in each call)    ', median(inside_ns), ' ns'
  print '(a,f8.2,a)', '  gfortran -O3 subroutine, ahead of time  ', median(fortran_ns), ' ns'
  print '(a,f8.2,a,a)', '  kiln costs more by                      ', median(kiln_ns) - median(fortran_ns), &
    ' ns; target <= 50 ns: ', merge('met   ', 'MISSED', median(kiln_ns) - median(fortran_ns) <= 50)
  call kiln_finalize(spec)
  call kiln_finalize(rt)
contains
  function median(values) result(m)
    real(c_double), intent(in) :: values(:)
    real(c_double) :: m, sorted(size(values)), t
    integer :: a, b
    sorted = values
    do a = 1, size(sorted)
      do b = a + 1, size(sorted)
        if (sorted(b) < sorted(a)) then
          t = sorted(a); sorted(a) = sorted(b); sorted(b) = t
        end if
      end do
    end do
    m = sorted((size(sorted) + 1) / 2)
  end function
end program call_bench
