! check mode: the step loop through kiln and through the Fortran reference
! on the same inputs, every output field of every stage compared point by
! point after each stage of each step. Fails (error stop 1) when a value
! differs by more than 1e-12 relative (absolute below 1), or when a stage's
! output never changed over the run (a stage that wrote nothing on either
! side would otherwise agree trivially).
module granule_check
  use, intrinsic :: iso_c_binding, only: wp => c_double
  use granule_grid, only: CELLS, EDGES, VERTICES
  use granule_state, only: state_t, swap_w
  use granule_stages
  use reference_step, only: icon_connectivity_t, run_reference_stage
  use kiln_step, only: kiln_granule_t, flat_tables_t, run_kiln_stage
  use state_compare, only: worst_difference, count_changed
  implicit none
  private

  real(wp), parameter, public :: TOLERANCE = 1e-12_wp
  ! The fields each stage writes, and their entity kind. z_nabla2_c, stage
  ! 4's scratch, is left out: its values mean nothing after the call (the
  ! .kiln says so), and w, which reads it, is compared.
  integer, parameter :: MAX_OUTPUTS = 3
  integer, parameter :: N_OUTPUTS(N_STAGES) = [2, 2, 1, 3, 1, 2, 2]
  integer, parameter :: OUTPUT_KIND(N_STAGES) = [CELLS, VERTICES, EDGES, CELLS, CELLS, CELLS, CELLS]

  type :: copy_t
    real(wp), allocatable :: x(:, :, :)
  end type

  public :: run_check

contains

  ! Output j of stage i in state s, and its name.
  subroutine output(i, j, s, p, name)
    integer, intent(in) :: i, j
    type(state_t), target, intent(in) :: s
    real(wp), pointer, intent(out) :: p(:, :, :)
    character(:), allocatable, intent(out) :: name
    select case (i * 10 + j)
    case (11); p => s%div; name = 'div'
    case (12); p => s%kh_c; name = 'kh_c'
    case (21); p => s%u_vert; name = 'u_vert'
    case (22); p => s%v_vert; name = 'v_vert'
    case (31); p => s%vn; name = 'vn'
    case (41); p => s%w_both(:, :, :, s%now); name = 'w'
    case (42); p => s%dwdx; name = 'dwdx'
    case (43); p => s%dwdy; name = 'dwdy'
    case (51); p => s%theta_v_ic; name = 'theta_v_ic'
    case (61); p => s%w_both(:, :, :, s%now); name = 'w'
    case (62); p => s%z_q; name = 'z_q'
    case (71); p => s%theta_v; name = 'theta_v'
    case (72); p => s%exner; name = 'exner'
    case default; error stop 'granule_check: no such output'
    end select
  end subroutine

  ! `steps` steps on `ref` (the reference, ICON connectivity `conn`) and
  ! `jit` (kiln, `k`, tables `t`); both start from the same inputs.
  subroutine run_check(st, n, ref, conn, jit, k, t, steps)
    type(stages_t), intent(in) :: st
    integer, intent(in) :: n(0:2), steps
    type(state_t), target, intent(inout) :: ref, jit
    type(icon_connectivity_t), intent(in) :: conn
    type(kiln_granule_t), intent(in) :: k
    type(flat_tables_t), intent(in) :: t
    real(wp) :: worst(N_STAGES)
    integer :: changed(MAX_OUTPUTS, N_STAGES), step, i, j, m
    type(copy_t) :: before(MAX_OUTPUTS)
    real(wp), pointer :: p(:, :, :), q(:, :, :)
    character(:), allocatable :: name
    logical :: failed
    worst = 0
    changed = 0
    do step = 1, steps
      do i = 1, N_STAGES
        do j = 1, N_OUTPUTS(i)
          call output(i, j, ref, p, name)
          before(j)%x = p
        end do
        call run_reference_stage(i, st, ref, conn)
        call run_kiln_stage(i, k, jit, t)
        do j = 1, N_OUTPUTS(i)
          m = n(OUTPUT_KIND(i))
          call output(i, j, ref, p, name)
          call output(i, j, jit, q, name)
          worst(i) = max(worst(i), worst_difference(p, q, m))
          changed(j, i) = changed(j, i) + count_changed(before(j)%x, p, m)
        end do
      end do
      call swap_w(ref)
      call swap_w(jit)
    end do

    failed = .false.
    print '(a, i0, a, es8.1, a)', 'kiln against the Fortran reference, ', steps, &
      ' steps; worst |a - b| / max(|a|, |b|, 1) per stage (tolerance ', TOLERANCE, '):'
    do i = 1, N_STAGES
      print '(2x, i0, 1x, a72, es10.2, a)', i, STAGE_NAMES(i), worst(i), merge('  ok      ', '  MISMATCH', &
                                                                                 worst(i) <= TOLERANCE)
      failed = failed .or. .not. worst(i) <= TOLERANCE
      do j = 1, N_OUTPUTS(i)
        if (changed(j, i) == 0) then
          call output(i, j, ref, p, name)
          print '(4x, a, a)', name, ': never changed by the stage, so the comparison proves nothing'
          failed = .true.
        end if
      end do
    end do
    if (failed) error stop 1
    print '(a)', 'check passed'
  end subroutine

end module granule_check
