! Tiered start from Fortran (kiln_init(..., tiered=.true.), kiln_wait_for_specialised;
! docs/manual/tiered-start.md): a specialised miss compiles the generic build first,
! the wait returns with the specialised build in, and the metrics file the runtime
! writes at its end (KILN_METRICS_FILE, set here) counts it exactly: the "(generic)"
! row one compile, found linked when asked for, and the three calls asked of it, the kernel's own row one compile
! and the three calls after the wait. Both builds compute the same bits. Exits with
! status 1 on a failed check.
program fortran_tiered_test
  use, intrinsic :: iso_c_binding
  use kiln
  use posix_calls, only: getpid_, setenv_
  implicit none
  integer, parameter :: n = 7, nlev = 5
  character(len=*), parameter :: nl = new_line('a')
  character(len=*), parameter :: axpy = &
    '#pragma kiln kernel f_tiered_axpy' // nl // &
    '#pragma kiln array double y[2]' // nl // &
    '#pragma kiln array double x[2]' // nl // &
    '#pragma kiln static double a' // nl // &
    '#pragma kiln domain c_start c_end k_start k_end' // nl // &
    'kiln::for_each_point(y, c_start, c_end, k_start, k_end, [&](kiln::index_t c, kiln::index_t k) {' // nl // &
    '  y(c, k) += a * x(c, k);' // nl // &
    '});' // nl
  type(kiln_runtime) :: rt
  type(kiln_spec) :: spec
  type(kiln_kernel) :: k, g
  real(c_double), target :: x(n, nlev), y(n, nlev), y_generic(n, nlev)
  integer :: i, stat, failures
  character(len=512) :: errmsg
  character(len=64) :: cache
  character(len=:), allocatable :: json
  failures = 0

  write (cache, '(a,i0)') '/tmp/kiln-fortran-tiered-', getpid_()
  call setenv_('KILN_CACHE_DIR', trim(cache))
  call setenv_('KILN_METRICS_FILE', trim(cache) // '.json')  ! times every call, written at the end

  call kiln_init(rt, stat=stat, errmsg=errmsg, tiered=.true.)
  call check(stat == KILN_OK, 'kiln_init(tiered=.true.): ' // trim(errmsg))
  call kiln_register(rt, axpy, 'f_tiered_axpy.kiln')
  call kiln_init(spec)
  call kiln_set(spec, 'c_start', 0)
  call kiln_set(spec, 'c_end', n)
  call kiln_set(spec, 'k_start', 0)
  call kiln_set(spec, 'k_end', nlev)
  call kiln_set(spec, 'a', 0.3_c_double)
  call random_number(x)
  call kiln_get(rt, 'f_tiered_axpy', spec, k)  ! a miss: the generic build compiled, the specialised queued
  call kiln_wait_for_specialised(rt, stat=stat, errmsg=errmsg)
  call check(stat == KILN_OK, 'kiln_wait_for_specialised: ' // trim(errmsg))
  y = 1
  do i = 1, 3
    call kiln_call(k, [kiln_array(y), kiln_array(x)])
  end do
  call kiln_get(rt, 'f_tiered_axpy', spec, g, generic=.true.)  ! its own build (the stand-in was at O1)
  y_generic = 1
  do i = 1, 3
    call kiln_call(g, [kiln_array(y_generic), kiln_array(x)])
  end do
  call check(all(y == y_generic), 'the generic and the specialised build compute the same bits')
  call kiln_finalize(spec)
  call kiln_finalize(rt)

  json = file_text(trim(cache) // '.json')
  ! The stand-in, compiled at Config's tiered_opt_level (O1), and the generic request's own build at opt_level.
  call check(metric(json, 'f_tiered_axpy (generic)', '', 'compiles') == 2, 'two generic compiles')
  call check(metric(json, 'f_tiered_axpy', '', 'compiles') == 1, 'one specialised compile')
  call check(calls(json, 'f_tiered_axpy') == 3, 'three calls of the specialised build')
  call check(calls(json, 'f_tiered_axpy (generic)') == 3, 'three calls of the generic build')
  call execute_command_line('rm -rf ' // trim(cache) // ' ' // trim(cache) // '.json')
  if (failures > 0) error stop 1
  print '(a)', 'fortran_tiered_test: every check passed'

contains

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(*), intent(in) :: what
    if (ok) return
    failures = failures + 1
    write (*, '(2a)') 'check failed: ', what
  end subroutine

  function file_text(path) result(text)
    character(*), intent(in) :: path
    character(len=:), allocatable :: text
    integer :: unit, bytes
    open (newunit=unit, file=path, access='stream', form='unformatted', status='old', action='read')
    inquire (unit=unit, size=bytes)
    allocate (character(len=bytes) :: text)
    read (unit) text
    close (unit)
  end function

  ! A field of row `row` in the metrics JSON (two-space indented): `phase` '' reads
  ! the row's own field, else that phase's. -1 without the row or field, 0 for a
  ! phase never timed. The row ends at its last field, "threads".
  integer function metric(json, row, phase, field)
    character(*), intent(in) :: json, row, phase, field
    integer :: start, end, at
    metric = -1
    start = index(json, '"' // row // '": {')
    if (start == 0) return
    end = start + index(json(start:), '"threads": ')
    if (len(phase) > 0) then
      at = index(json(start:end), '"' // phase // '": {')
      metric = 0
      if (at == 0) return
      start = start + at
      metric = -1
    end if
    at = index(json(start:end), '"' // field // '": ')
    if (at == 0) return
    at = start + at - 1 + len(field) + 4
    read (json(at:at + index(json(at:), ',') - 2), *) metric
  end function

  integer function calls(json, row)
    character(*), intent(in) :: json, row
    calls = metric(json, row, 'first_call', 'count') + metric(json, row, 'run', 'count')
  end function

end program fortran_tiered_test
