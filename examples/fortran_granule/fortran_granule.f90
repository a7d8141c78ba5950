! kiln_fortran_granule: the granule's step driven from Fortran, through kiln
! on ICON-layout arrays and through the same kernels written in Fortran
! (icon_kernels.f90) on copies of the same inputs.
!
!   kiln_fortran_granule check|bench flat|blocked torus|lam nx ny nlev nproma steps
!
! nproma 0 is one block holding every entity of every kind (the GPU layout).
! flat: kiln gets (n, nlev) arrays, the reference blocks of nproma; blocked:
! both get the same (nproma, nlev, nblks) layout. check compares every
! output after every stage (exit 1 on a mismatch); bench times both and
! kiln's start-up (steps = timed rounds). Run with KILN_CACHE_DIR set.
program fortran_granule
  use, intrinsic :: iso_c_binding
  use, intrinsic :: iso_fortran_env, only: int64
  use kiln
  use granule_grid
  use granule_state, only: state_t, make_state
  use granule_stages, only: stages_t, make_stages
  use reference_step, only: icon_connectivity_t, make_icon_connectivity
  use kiln_step, only: kiln_granule_t, flat_tables_t, resolve_kernels
  use granule_check, only: run_check
  use granule_bench, only: run_bench, seconds_since
  implicit none
  integer, parameter :: SEED = 1
  character(16) :: mode, layout, kind
  integer :: nx, ny, nlev, nproma, steps, np_ref
  type(grid_t) :: grid
  type(stages_t) :: st
  type(state_t), target :: ref, jit
  type(icon_connectivity_t) :: conn
  type(flat_tables_t), target :: tables
  type(kiln_granule_t) :: k, k2
  integer(int64) :: start
  real(c_double) :: tables_s, runtime_s, get_s, runtime2_s, get2_s

  call read_arguments()
  call grid_create(grid, kind == 'lam', nx, ny)
  st = make_stages(grid, nlev)
  np_ref = nproma
  if (nproma == 0) np_ref = maxval(grid%n)
  call make_state(ref, grid%n, [np_ref, np_ref, np_ref], nlev, SEED)
  if (layout == 'blocked') then
    call make_state(jit, grid%n, [np_ref, np_ref, np_ref], nlev, SEED)
  else
    call make_state(jit, grid%n, grid%n, nlev, SEED)
  end if
  conn = make_icon_connectivity(grid, np_ref)

  ! kiln's flat tables from ICON's index and block arrays, once at set-up.
  allocate(tables%c2e(grid%n(CELLS), 3), tables%v2e(grid%n(VERTICES), 6), tables%e2c2v(grid%n(EDGES), 4), &
           tables%c2e2co(grid%n(CELLS), 4))
  call system_clock(start)
  call kiln_flat_table(conn%c2e_idx, conn%c2e_blk, tables%c2e)
  call kiln_flat_table(conn%v2e_idx, conn%v2e_blk, tables%v2e)
  call kiln_flat_table(conn%e2c2v_idx, conn%e2c2v_blk, tables%e2c2v)
  call kiln_flat_table(conn%c2e2co_idx, conn%c2e2co_blk, tables%c2e2co)
  tables_s = seconds_since(start)
  ! They must be the fixture's tables, which ICON's arrays were made from.
  call expect_table('C2E', grid%n(CELLS), tables%c2e)
  call expect_table('V2E', grid%n(VERTICES), tables%v2e)
  call expect_table('E2C2V', grid%n(EDGES), tables%e2c2v)
  call expect_table('C2E2CO', grid%n(CELLS), tables%c2e2co)

  call system_clock(start)
  call kiln_init(k%rt)
  runtime_s = seconds_since(start)
  call system_clock(start)
  call resolve_kernels(k, st, jit, tables, layout == 'blocked')
  get_s = seconds_since(start)

  print '(a, 1x, a, 1x, i0, "x", i0, ": ", i0, " cells, ", i0, " edges, ", i0, " vertices, ", i0, " levels")', &
    trim(mode), trim(kind), nx, ny, grid%n(CELLS), grid%n(EDGES), grid%n(VERTICES), nlev
  if (layout == 'blocked') then
    print '(a, i0, a)', 'layout blocked: kiln and the reference both on (nproma, nlev, nblks), nproma ', np_ref, &
      trim(merge(' (one block)', '            ', nproma == 0))
  else
    print '(a, i0, a)', 'layout flat: kiln on (n, nlev), the reference on (nproma, nlev, nblks), nproma ', np_ref, &
      trim(merge(' (one block)', '            ', nproma == 0))
  end if

  if (mode == 'check') then
    call run_check(st, grid%n, ref, conn, jit, k, tables, steps)
  else
    ! A second runtime in this process: every kernel is in the disk cache now.
    call system_clock(start)
    call kiln_init(k2%rt)
    runtime2_s = seconds_since(start)
    call system_clock(start)
    call resolve_kernels(k2, st, jit, tables, layout == 'blocked')
    get2_s = seconds_since(start)
    call kiln_finalize(k2%rt)
    print '(a)', 'init (ms):'
    print '(2x, a, f9.3)', 'kiln_flat_table, C2E V2E E2C2V C2E2CO from ICON idx/blk ', tables_s * 1e3
    print '(2x, a, f9.3, a, f9.3)', 'first runtime of this process:  kiln_init', runtime_s * 1e3, &
      ', specs + 7 kiln_get', get_s * 1e3
    print '(2x, a, f9.3, a, f9.3)', 'second runtime, same process:   kiln_init', runtime2_s * 1e3, &
      ', specs + 7 kiln_get', get2_s * 1e3
    print '(a, f8.3, a, a, a)', 'target: warm init of the seven <= 5 ms: ', (runtime_s + get_s) * 1e3, ' ms ', &
      merge('met   ', 'MISSED', (runtime_s + get_s) * 1e3 <= 5), &
      ' (first runtime: warm only when KILN_CACHE_DIR already held the kernels, as on a second run)'
    call run_bench(st, grid%n, ref, conn, jit, k, tables, steps)
  end if
  call kiln_finalize(k%rt)
  call grid_destroy(grid)

contains

  subroutine read_arguments()
    character(32) :: arg
    integer :: i, values(5), status
    if (command_argument_count() /= 8) call usage()
    call get_command_argument(1, mode)
    call get_command_argument(2, layout)
    call get_command_argument(3, kind)
    if (mode /= 'check' .and. mode /= 'bench') call usage()
    if (layout /= 'flat' .and. layout /= 'blocked') call usage()
    if (kind /= 'torus' .and. kind /= 'lam') call usage()
    do i = 1, 5
      call get_command_argument(3 + i, arg)
      read (arg, *, iostat=status) values(i)
      if (status /= 0) call usage()
    end do
    nx = values(1)
    ny = values(2)
    nlev = values(3)
    nproma = values(4)
    steps = values(5)
    if (nlev < 2 .or. nproma < 0 .or. steps < 1) call usage()
  end subroutine

  subroutine usage()
    error stop 'usage: kiln_fortran_granule check|bench flat|blocked torus|lam nx ny nlev(>=2) nproma(0: one block) &
               &steps(>=1)'
  end subroutine

  subroutine expect_table(name, n, table)
    character(*), intent(in) :: name
    integer, intent(in) :: n
    integer(c_int32_t), intent(in) :: table(:, :)
    integer(c_int32_t), allocatable :: expected(:, :)
    call flat_table(grid, name, n, expected)
    if (any(table /= expected)) error stop 'kiln_flat_table gave another ' // name // ' than the grid''s'
  end subroutine

end program fortran_granule
