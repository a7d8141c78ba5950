! The same kernel as kernels_src/update_theta_and_exner.kiln, written as ICON
! writes its loops, compiled ahead of time: the baseline of the call bench.
module reference_kernels
  use, intrinsic :: iso_c_binding
  implicit none
contains
  subroutine update_theta_and_exner(theta_v, exner, area, z_temp, hs, he, vs, ve, rd_o_cvd)
    real(c_double), intent(inout) :: theta_v(:, :), exner(:, :)
    real(c_double), intent(in) :: area(:), z_temp(:, :)
    integer, intent(in) :: hs, he, vs, ve  ! 0-based, end exclusive, as kiln's domain
    real(c_double), intent(in) :: rd_o_cvd
    integer :: jc, jk
    real(c_double) :: th0, th
    do jk = vs + 1, ve
      do jc = hs + 1, he
        th0 = theta_v(jc, jk)
        th = th0 + area(jc) * z_temp(jc, jk)
        exner(jc, jk) = exner(jc, jk) * (1 + rd_o_cvd * (th / th0 - 1))
        theta_v(jc, jk) = th
      end do
    end do
  end subroutine
end module reference_kernels
