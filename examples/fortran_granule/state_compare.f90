! Point-by-point comparison of the same field in two states of different
! nproma: entity c (0-based) of a state with nproma p lies at
! (mod(c, p) + 1, :, c / p + 1); block padding is never compared.
module state_compare
  use, intrinsic :: iso_c_binding, only: wp => c_double
  use, intrinsic :: ieee_arithmetic, only: ieee_is_finite
  implicit none
  private

  public :: worst_difference, count_changed

contains

  ! The largest |a - b| / max(|a|, |b|, 1) over the n entities and every
  ! column: relative for large values, absolute near 0. A value that is not
  ! finite on either side counts as huge(1.0): the granule's inputs keep
  ! every field finite, so a NaN or Inf is a fault, even if both sides share it.
  function worst_difference(a, b, n) result(worst)
    real(wp), intent(in) :: a(:, :, :), b(:, :, :)
    integer, intent(in) :: n
    real(wp) :: worst, x, y
    integer :: c, j, pa, pb
    pa = size(a, 1)
    pb = size(b, 1)
    worst = 0
    do j = 1, size(a, 2)
      do c = 0, n - 1
        x = a(mod(c, pa) + 1, j, c / pa + 1)
        y = b(mod(c, pb) + 1, j, c / pb + 1)
        if (.not. (ieee_is_finite(x) .and. ieee_is_finite(y))) then
          worst = huge(1.0_wp)
          return
        end if
        worst = max(worst, abs(x - y) / max(abs(x), abs(y), 1.0_wp))
      end do
    end do
  end function

  ! How many of the n entities' values differ between two copies of a
  ! field in the same layout (before and after a stage).
  integer function count_changed(before, after, n)
    real(wp), intent(in) :: before(:, :, :), after(:, :, :)
    integer, intent(in) :: n
    integer :: c, j, p
    p = size(before, 1)
    count_changed = 0
    do j = 1, size(before, 2)
      do c = 0, n - 1
        if (before(mod(c, p) + 1, j, c / p + 1) /= after(mod(c, p) + 1, j, c / p + 1)) &
          count_changed = count_changed + 1
      end do
    end do
  end function

end module state_compare
