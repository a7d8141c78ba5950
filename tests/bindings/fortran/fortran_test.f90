! The Fortran module under gfortran: a kernel written once over (cell, level)
! runs on whole arrays and on sections (a level range, every other cell)
! with their real strides and no copy, specialised and generic, and matches
! the same loop in Fortran exactly; errors come back through stat and errmsg
! naming the kernel or argument. Exits with status 1 on a failed check.
program fortran_test
  use, intrinsic :: iso_c_binding
  use kiln
  use posix_calls, only: getpid_, setenv_
  implicit none
  integer, parameter :: n = 7, nlev = 5
  character(len=*), parameter :: nl = new_line('a')
  character(len=*), parameter :: axpy = &
    '#pragma kiln kernel f_axpy' // nl // &
    '#pragma kiln array double y[2]' // nl // &
    '#pragma kiln array double x[2]' // nl // &
    '#pragma kiln scalar double a' // nl // &
    '#pragma kiln domain c_start c_end k_start k_end' // nl // &
    'kiln::for_each_point(y, c_start, c_end, k_start, k_end, [&](kiln::index_t c, kiln::index_t k) {' // nl // &
    '  y(c, k) += a * x(c, k);' // nl // &
    '});' // nl
  type(kiln_runtime) :: rt
  type(kiln_spec) :: spec
  type(kiln_kernel) :: k, g
  real(c_double), target :: x(n, nlev), y(n, nlev), expected(n, nlev)
  integer :: c, l, stat, failures
  character(len=512) :: errmsg
  character(len=64) :: cache
  failures = 0

  ! A fresh cache per run: the first resolution compiles.
  write (cache, '(a,i0)') '/tmp/kiln-fortran-test-', getpid_()
  call setenv_('KILN_CACHE_DIR', trim(cache))

  call kiln_init(rt)
  call kiln_register(rt, axpy, 'f_axpy.kiln')
  do l = 1, nlev
    do c = 1, n
      x(c, l) = c + 10 * l
    end do
  end do

  ! The whole arrays: cells 2..5 (0-based 1..4) of every level.
  y = 1
  call kiln_init(spec)
  call kiln_set(spec, 'c_start', 1)
  call kiln_set(spec, 'c_end', 5)
  call kiln_set(spec, 'k_start', 0)
  call kiln_set(spec, 'k_end', nlev)
  call kiln_set_strides_of(spec, 'y', y)
  call kiln_get(rt, 'f_axpy', spec, k)
  call kiln_call(k, [kiln_array(y), kiln_array(x), kiln_scalar(0.5_c_double)])
  expected = 1
  expected(2:5, :) = 1 + 0.5_c_double * x(2:5, :)
  call check(all(y == expected), 'whole arrays, specialised')

  ! The cell bounds read at run time (kiln_set_run_time): two ranges, one binary.
  y = 1
  call kiln_init(spec)
  call kiln_set(spec, 'c_start', 0)
  call kiln_set(spec, 'c_end', 2)
  call kiln_set(spec, 'k_start', 0)
  call kiln_set(spec, 'k_end', nlev)
  call kiln_set_run_time(spec, 'c_start')
  call kiln_set_run_time(spec, 'c_end')
  call kiln_get(rt, 'f_axpy', spec, k)
  call kiln_call(k, [kiln_array(y), kiln_array(x), kiln_scalar(0.5_c_double)])
  call kiln_set(spec, 'c_start', 5)
  call kiln_set(spec, 'c_end', n)
  call kiln_get(rt, 'f_axpy', spec, k)
  call kiln_call(k, [kiln_array(y), kiln_array(x), kiln_scalar(0.5_c_double)])
  expected = 1
  expected(1:2, :) = 1 + 0.5_c_double * x(1:2, :)
  expected(6:n, :) = 1 + 0.5_c_double * x(6:n, :)
  call check(all(y == expected), 'run-time bounds')
  call kiln_set_run_time(spec, 'no_such', stat=stat, errmsg=errmsg)
  call check(stat == KILN_ERROR_SPEC .and. index(errmsg, 'set its value first') > 0, 'run-time unset: ' // trim(errmsg))

  ! Sections: levels 2..nlev, and every other cell; generic (strides at run time).
  y = 1
  call kiln_init(spec)
  call kiln_set(spec, 'c_start', 0)
  call kiln_set(spec, 'c_end', 3)
  call kiln_set(spec, 'k_start', 0)
  call kiln_set(spec, 'k_end', nlev - 1)
  call kiln_get(rt, 'f_axpy', spec, g, generic=.true.)
  call kiln_call(g, [kiln_array(y(1:n:2, 2:nlev)), kiln_array(x(1:n:2, 2:nlev)), kiln_scalar(2.0_c_double)])
  expected = 1
  expected(1:5:2, 2:nlev) = 1 + 2 * x(1:5:2, 2:nlev)
  call check(all(y == expected), 'sections, generic')

  ! ICON's blocks: yb(nproma, nlev, nblks) with nproma 3 (n = 7 cells: 3
  ! blocks, two cells of padding), cells 2..6 across all three blocks; the
  ! same kernel, specialised on the blocks.
  block
    integer, parameter :: nproma = 3, nblks = 3
    real(c_double), target :: yb(nproma, nlev, nblks), xb(nproma, nlev, nblks)
    integer :: jb, jc
    type(kiln_spec) :: bspec
    type(kiln_kernel) :: kb
    yb = 1
    xb = 0
    do jb = 1, nblks
      do jc = 1, nproma
        c = (jb - 1) * nproma + jc
        if (c <= n) xb(jc, :, jb) = x(c, :)
      end do
    end do
    call kiln_init(bspec)
    call kiln_set(bspec, 'c_start', 1)
    call kiln_set(bspec, 'c_end', 6)
    call kiln_set(bspec, 'k_start', 0)
    call kiln_set(bspec, 'k_end', nlev)
    call kiln_set_blocked_like(bspec, 'y', yb)
    call kiln_set_blocked(bspec, 'x', nproma)
    call kiln_get(rt, 'f_axpy', bspec, kb)
    call kiln_call(kb, [kiln_array(yb), kiln_array(xb), kiln_scalar(0.5_c_double)])
    do jb = 1, nblks
      do jc = 1, nproma
        c = (jb - 1) * nproma + jc
        if (c >= 2 .and. c <= 6) then
          call check(all(yb(jc, :, jb) == 1 + 0.5_c_double * x(c, :)), 'blocked, inside the domain')
        else
          call check(all(yb(jc, :, jb) == 1), 'blocked, outside the domain')
        end if
      end do
    end do
    call kiln_call(kb, [kiln_array(y), kiln_array(xb), kiln_scalar(0.5_c_double)], stat=stat, errmsg=errmsg)
    call check(stat == KILN_ERROR_ARGUMENT .and. index(errmsg, 'specialised blocked') > 0, 'flat for blocked: ' // &
               trim(errmsg))
    call kiln_finalize(bspec)
  end block

  ! ICON's idx/blk neighbour arrays into kiln's flat table: 3 entities in
  ! blocks of 2, two neighbours each, the third entity's second missing.
  block
    integer(c_int32_t), target :: idx(2, 2, 2), blk(2, 2, 2), table(3, 2)
    idx = 0
    blk = 0
    idx(:, 1, 1) = [1, 2]; blk(:, 1, 1) = [1, 1]    ! entities 0, 1: neighbours 0, 1
    idx(1, 2, 1) = 1; blk(1, 2, 1) = 2              ! entity 2: neighbour 2
    idx(:, 1, 2) = [2, 2]; blk(:, 1, 2) = [2, 1]    ! second neighbours 3, 1
    table = 7
    call kiln_flat_table(idx, blk, table)
    call check(all(table(:, 1) == [0, 1, 2]) .and. all(table(:, 2) == [3, 1, -1]), 'flat table')
    idx(1, 1, 1) = 3  ! past nproma
    table = 7
    call kiln_flat_table(idx, blk, table, stat=stat, errmsg=errmsg)
    call check(stat == KILN_ERROR_ARGUMENT .and. index(errmsg, 'idx(1, 1, 1) = 3 lies outside 1..2') > 0 .and. &
               all(table == 7), 'broken idx: ' // trim(errmsg))
  end block

  ! logical(c_bool) arrays are kiln's bool arrays: a mask read and a mask
  ! written in place; a bool array is refused for a double argument, and an
  ! integer(c_int8_t) array (no kiln type) for any.
  block
    character(len=*), parameter :: masked = &
      '#pragma kiln kernel f_masked' // nl // &
      '#pragma kiln array double y[2]' // nl // &
      '#pragma kiln array bool keep[2]' // nl // &
      '#pragma kiln array bool negative[2]' // nl // &
      '#pragma kiln domain c_end k_end' // nl // &
      'kiln::for_each_point(y, 0, c_end, 0, k_end, [&](kiln::index_t c, kiln::index_t k) {' // nl // &
      '  if (!keep(c, k)) y(c, k) = 0.0;' // nl // &
      '  negative(c, k) = y(c, k) < 0.0;' // nl // &
      '});' // nl
    logical(c_bool), target :: keep(n, nlev), negative(n, nlev)
    integer(c_int8_t), target :: bytes(n, nlev)
    type(kiln_spec) :: mspec
    type(kiln_kernel) :: km
    type(kiln_arg) :: view
    call kiln_register(rt, masked, 'f_masked.kiln')
    call kiln_init(mspec)
    call kiln_set(mspec, 'c_end', n)
    call kiln_set(mspec, 'k_end', nlev)
    call kiln_get(rt, 'f_masked', mspec, km)
    y = x - 30
    keep = mod(x, 3.0_c_double) /= 0
    negative = .true.
    call kiln_call(km, [kiln_array(y), kiln_array(keep), kiln_array(negative)])
    expected = merge(x - 30, 0.0_c_double, logical(keep))
    call check(all(y == expected), 'logical(c_bool) mask read')
    call check(all(negative .eqv. (expected < 0)) .and. any(negative) .and. .not. all(negative), &
               'logical(c_bool) mask written')
    call kiln_call(km, [kiln_array(keep), kiln_array(keep), kiln_array(negative)], stat=stat, errmsg=errmsg)
    call check(stat == KILN_ERROR_ARGUMENT .and. &
               index(errmsg, "'y': expected a double array of rank 2, got a bool array of rank 2") > 0, &
               'bool for double: ' // trim(errmsg))
    bytes = 1
    call kiln_view(view, bytes, stat=stat, errmsg=errmsg)
    call check(stat == KILN_ERROR_INVALID_ARGUMENT .and. index(errmsg, 'element type') > 0, &
               'int8 array: ' // trim(errmsg))
    call kiln_finalize(mspec)
  end block

  ! Errors: stat and errmsg, no stop.
  errmsg = ''
  call kiln_get(rt, 'no_such_kernel', spec, k, stat=stat, errmsg=errmsg)
  call check(stat == KILN_ERROR_UNKNOWN_KERNEL .and. index(errmsg, 'no_such_kernel') > 0, 'unknown kernel: ' // trim(errmsg))
  call kiln_get(rt, 'f_axpy', spec, g, generic=.true.)
  call kiln_call(g, [kiln_array(y), kiln_array(x)], stat=stat, errmsg=errmsg)
  call check(stat == KILN_ERROR_ARGUMENT .and. index(errmsg, 'f_axpy') > 0, 'argument count: ' // trim(errmsg))
  call kiln_call(g, [kiln_array(y), kiln_array(x), kiln_scalar(1_c_int32_t)], stat=stat, errmsg=errmsg)
  call check(stat == KILN_ERROR_ARGUMENT .and. index(errmsg, "'a'") > 0, 'scalar type: ' // trim(errmsg))
  call kiln_register(rt, '#pragma kiln array double y[9]', 'bad.kiln', stat=stat, errmsg=errmsg)
  call check(stat == KILN_ERROR_KERNEL_SOURCE .and. index(errmsg, 'bad.kiln') > 0, 'kernel text: ' // trim(errmsg))
  block
    logical, target :: flags(3)
    type(kiln_arg) :: view
    flags = .true.
    call kiln_view(view, flags, stat=stat, errmsg=errmsg)
    call check(stat == KILN_ERROR_INVALID_ARGUMENT .and. index(errmsg, 'element type') > 0, 'logical array: ' // trim(errmsg))
  end block

  ! Settings without KILN_* variables (issue 33, item 11): check mode, threads,
  ! the target CPU and the gather choice; a value the variable would refuse is refused.
  block
    type(kiln_runtime) :: set, refused
    call kiln_init(set, stat=stat, errmsg=errmsg, check=.true., threads=1, target_cpu='native', gather='off')
    call check(stat == KILN_OK, 'kiln_init with settings: ' // trim(errmsg))
    call kiln_finalize(set)
    errmsg = ''
    call kiln_init(refused, stat=stat, errmsg=errmsg, threads=5000)
    call check(stat == KILN_ERROR_INVALID_ARGUMENT .and. index(errmsg, 'KILN_THREADS') > 0, &
               'threads=5000: ' // trim(errmsg))
    errmsg = ''
    call kiln_init(refused, stat=stat, errmsg=errmsg, target_cpu='pentium-9000')
    call check(stat == KILN_ERROR_INVALID_ARGUMENT .and. index(errmsg, 'pentium-9000') > 0, &
               'target_cpu: ' // trim(errmsg))
    errmsg = ''
    call kiln_init(refused, stat=stat, errmsg=errmsg, gather='always')
    call check(stat == KILN_ERROR_INVALID_ARGUMENT .and. &
               index(errmsg, "Config::gather 'always': expected auto, on or off") > 0, 'gather: ' // trim(errmsg))
  end block

  call kiln_finalize(spec)
  call kiln_finalize(rt)
  call execute_command_line('rm -rf ' // trim(cache))
  if (failures > 0) error stop 1
  print '(a)', 'fortran_test: every check passed'

contains

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(*), intent(in) :: what
    if (ok) return
    failures = failures + 1
    write (*, '(2a)') 'check failed: ', what
  end subroutine

end program fortran_test
