! bench mode: run time of each stage and of the step, kiln against the
! Fortran reference on the same inputs in the same process. Each round runs
! one step through each (which goes first alternates between rounds, so
! neither always finds the caches the other left); figures are medians over
! the rounds. Issue 17's target, kiln's step <= 1.0x the reference's, is
! printed as met or MISSED, never asserted: timings belong to the machine.
module granule_bench
  use, intrinsic :: iso_c_binding, only: wp => c_double
  use, intrinsic :: iso_fortran_env, only: int64
  use granule_state, only: state_t, swap_w
  use granule_stages
  use reference_step, only: icon_connectivity_t, run_reference_stage
  use kiln_step, only: kiln_granule_t, flat_tables_t, run_kiln_stage
  use state_compare, only: worst_difference
  use granule_grid, only: CELLS, EDGES
  implicit none
  private

  public :: run_bench, seconds_since, median

contains

  ! Seconds from `start` (a system_clock count) to now.
  real(wp) function seconds_since(start)
    integer(int64), intent(in) :: start
    integer(int64) :: now, rate
    call system_clock(now, rate)
    seconds_since = real(now - start, wp) / real(rate, wp)
  end function

  real(wp) function median(values)
    real(wp), intent(in) :: values(:)
    real(wp) :: sorted(size(values)), t
    integer :: a, b
    sorted = values
    do a = 1, size(sorted)
      do b = a + 1, size(sorted)
        if (sorted(b) < sorted(a)) then
          t = sorted(a)
          sorted(a) = sorted(b)
          sorted(b) = t
        end if
      end do
    end do
    if (mod(size(sorted), 2) == 1) then
      median = sorted((size(sorted) + 1) / 2)
    else
      median = (sorted(size(sorted) / 2) + sorted(size(sorted) / 2 + 1)) / 2
    end if
  end function

  ! `rounds` rounds after one untimed step each (first touch of every array,
  ! kiln's first call of each kernel).
  subroutine run_bench(st, n, ref, conn, jit, k, t, rounds)
    type(stages_t), intent(in) :: st
    integer, intent(in) :: n(0:2), rounds
    type(state_t), target, intent(inout) :: ref, jit
    type(icon_connectivity_t), intent(in) :: conn
    type(kiln_granule_t), intent(in) :: k
    type(flat_tables_t), intent(in) :: t
    real(wp) :: kiln_s(N_STAGES, rounds), fortran_s(N_STAGES, rounds), kiln_step_s(rounds), fortran_step_s(rounds)
    real(wp) :: a, b, drift
    integer :: r, i
    call kiln_step_timed(kiln_s(:, 1))
    call reference_step_timed(fortran_s(:, 1))
    do r = 1, rounds
      if (mod(r, 2) == 1) then
        call kiln_step_timed(kiln_s(:, r))
        call reference_step_timed(fortran_s(:, r))
      else
        call reference_step_timed(fortran_s(:, r))
        call kiln_step_timed(kiln_s(:, r))
      end if
      kiln_step_s(r) = sum(kiln_s(:, r))
      fortran_step_s(r) = sum(fortran_s(:, r))
    end do

    print '(a, i0, a)', 'run time, median of ', rounds, ' alternating rounds (us):'
    print '(2x, a72, 3a10)', 'stage', 'kiln', 'Fortran', 'ratio'
    do i = 1, N_STAGES
      a = median(kiln_s(i, :))
      b = median(fortran_s(i, :))
      print '(2x, a72, 2f10.1, f10.2)', STAGE_NAMES(i), a * 1e6_wp, b * 1e6_wp, a / b
    end do
    a = median(kiln_step_s)
    b = median(fortran_step_s)
    print '(2x, a72, 2f10.1, f10.2)', 'step (sum of the seven)', a * 1e6_wp, b * 1e6_wp, a / b
    print '(a, f5.2, a, a)', 'target: kiln step <= 1.0x Fortran: ', a / b, 'x ', merge('met   ', 'MISSED', a <= b)
    ! Both sides ran the same steps on the same inputs: their states agree.
    drift = max(worst_difference(ref%w_both(:, :, :, ref%now), jit%w_both(:, :, :, jit%now), n(CELLS)), &
                worst_difference(ref%theta_v, jit%theta_v, n(CELLS)), worst_difference(ref%vn, jit%vn, n(EDGES)))
    print '(a, i0, a, es9.2)', 'after ', rounds + 1, ' steps each, kiln and Fortran w, theta_v, vn differ by ', drift
  contains
    subroutine kiln_step_timed(seconds)
      real(wp), intent(out) :: seconds(N_STAGES)
      integer(int64) :: start
      integer :: j
      do j = 1, N_STAGES
        call system_clock(start)
        call run_kiln_stage(j, k, jit, t)
        seconds(j) = seconds_since(start)
      end do
      call swap_w(jit)
    end subroutine
    subroutine reference_step_timed(seconds)
      real(wp), intent(out) :: seconds(N_STAGES)
      integer(int64) :: start
      integer :: j
      do j = 1, N_STAGES
        call system_clock(start)
        call run_reference_stage(j, st, ref, conn)
        seconds(j) = seconds_since(start)
      end do
      call swap_w(ref)
    end subroutine
  end subroutine

end module granule_bench
