! The granule's seven kernels (granule/granule.hpp) written directly in
! Fortran as ICON writes them: fields blocked (nproma, nlev, nblks), loops
! over blocks, levels, then the columns of a block (get_indices), neighbours
! read through 1-based index and block arrays idx(nproma, nblks, n) and
! blk(...), where a missing neighbour (limited-area boundary) is idx = 0.
! The reference kiln is measured and checked against, compiled ahead of time
! (-O3 -march=native).
!
! Each kernel does the arithmetic of its kernels_src/*.kiln in the same order
! (sums from the first neighbour on, the same products grouped the same way),
! so results agree to rounding. What may still differ: gfortran contracts a*b + c
! into a fused multiply-add across a whole statement, clang (kiln) within one
! expression, and the two may fuse different pairs of the same statement:
! a difference of an ulp or so of the largest term, well inside the check's 1e-12.
!
! Domains are kiln's: horizontal [hs, he) and vertical [vs, ve) are 0-based,
! end excluded; flat horizontal index c = (jb - 1) * nproma + (jc - 1).
module icon_kernels
  use, intrinsic :: iso_c_binding, only: wp => c_double
  implicit none
  private
  public :: temporary_fields_for_turbulence_diagnostics, mo_intp_rbf_rbf_vec_interpol_vertex, &
            apply_diffusion_to_vn, apply_diffusion_to_w_and_gradients_for_turbulence, &
            interpolate_cell_field_to_half_levels, solve_tridiagonal_matrix_for_w, update_theta_and_exner, &
            block_range, get_indices

contains

  ! The blocks the flat range [hs, he) meets; i_endblk < i_startblk when it is empty.
  pure subroutine block_range(hs, he, nproma, i_startblk, i_endblk)
    integer, intent(in) :: hs, he, nproma
    integer, intent(out) :: i_startblk, i_endblk
    if (he <= hs) then
      i_startblk = 1
      i_endblk = 0
    else
      i_startblk = hs / nproma + 1
      i_endblk = (he - 1) / nproma + 1
    end if
  end subroutine

  ! ICON's get_indices_c/e/v: the columns [i_startidx, i_endidx] of block jb
  ! inside [hs, he) (the whole block except at the range's first and last).
  pure subroutine get_indices(hs, he, nproma, jb, i_startblk, i_endblk, i_startidx, i_endidx)
    integer, intent(in) :: hs, he, nproma, jb, i_startblk, i_endblk
    integer, intent(out) :: i_startidx, i_endidx
    i_startidx = 1
    i_endidx = nproma
    if (jb == i_startblk) i_startidx = mod(hs, nproma) + 1
    if (jb == i_endblk) i_endidx = mod(he - 1, nproma) + 1
  end subroutine

  ! 1: divergence of vn and kh_smag_ec averaged to cells (C2E: every cell of
  ! the domain has its three edges, none is missing).
  subroutine temporary_fields_for_turbulence_diagnostics(kh_smag_ec, vn, e_bln_c_s, geofac_div, diff_multfac_smag, &
                                                          kh_c, div, ieidx, ieblk, nproma, hs, he, vs, ve)
    real(wp), contiguous, intent(in) :: kh_smag_ec(:, :, :), vn(:, :, :), e_bln_c_s(:, :, :), geofac_div(:, :, :), &
                                        diff_multfac_smag(:)
    real(wp), contiguous, intent(inout) :: kh_c(:, :, :), div(:, :, :)  ! points outside the domain keep their values
    integer, contiguous, intent(in) :: ieidx(:, :, :), ieblk(:, :, :)
    integer, intent(in) :: nproma, hs, he, vs, ve
    integer :: jb, jk, jc, i_startblk, i_endblk, i_startidx, i_endidx
    call block_range(hs, he, nproma, i_startblk, i_endblk)
    do jb = i_startblk, i_endblk
      call get_indices(hs, he, nproma, jb, i_startblk, i_endblk, i_startidx, i_endidx)
      do jk = vs + 1, ve
        do jc = i_startidx, i_endidx
          div(jc, jk, jb) = geofac_div(jc, 1, jb) * vn(ieidx(jc, jb, 1), jk, ieblk(jc, jb, 1)) &
                            + geofac_div(jc, 2, jb) * vn(ieidx(jc, jb, 2), jk, ieblk(jc, jb, 2)) &
                            + geofac_div(jc, 3, jb) * vn(ieidx(jc, jb, 3), jk, ieblk(jc, jb, 3))
          kh_c(jc, jk, jb) = (e_bln_c_s(jc, 1, jb) * kh_smag_ec(ieidx(jc, jb, 1), jk, ieblk(jc, jb, 1)) &
                              + e_bln_c_s(jc, 2, jb) * kh_smag_ec(ieidx(jc, jb, 2), jk, ieblk(jc, jb, 2)) &
                              + e_bln_c_s(jc, 3, jb) * kh_smag_ec(ieidx(jc, jb, 3), jk, ieblk(jc, jb, 3))) &
                             / diff_multfac_smag(jk)
        end do
      end do
    end do
  end subroutine

  ! 2: RBF reconstruction of (u, v) at vertices from the edges around them;
  ! an edge a boundary vertex lacks (idx 0, V2E's -1) adds nothing.
  subroutine mo_intp_rbf_rbf_vec_interpol_vertex(p_e_in, ptr_coeff_1, ptr_coeff_2, p_u_out, p_v_out, iidx, iblk, &
                                                 nproma, hs, he, vs, ve)
    real(wp), contiguous, intent(in) :: p_e_in(:, :, :), ptr_coeff_1(:, :, :), ptr_coeff_2(:, :, :)
    real(wp), contiguous, intent(inout) :: p_u_out(:, :, :), p_v_out(:, :, :)
    integer, contiguous, intent(in) :: iidx(:, :, :), iblk(:, :, :)
    integer, intent(in) :: nproma, hs, he, vs, ve
    integer :: jb, jk, jv, j, i_startblk, i_endblk, i_startidx, i_endidx
    real(wp) :: u, v, e
    call block_range(hs, he, nproma, i_startblk, i_endblk)
    do jb = i_startblk, i_endblk
      call get_indices(hs, he, nproma, jb, i_startblk, i_endblk, i_startidx, i_endidx)
      do jk = vs + 1, ve
        do jv = i_startidx, i_endidx
          u = 0.0_wp
          v = 0.0_wp
          do j = 1, 6
            if (iidx(jv, jb, j) > 0) then
              e = p_e_in(iidx(jv, jb, j), jk, iblk(jv, jb, j))
              u = u + ptr_coeff_1(jv, j, jb) * e
              v = v + ptr_coeff_2(jv, j, jb) * e
            end if
          end do
          p_u_out(jv, jk, jb) = u
          p_v_out(jv, jk, jb) = v
        end do
      end do
    end do
  end subroutine

  ! 3: diffusion of vn. On a limited-area grid the edges before the second
  ! nudging row get nabla2 with fac_bdydiff_v, the others Smagorinsky nabla2
  ! plus nabla4 through their four E2C2V vertices (all present there); a
  ! torus has only the latter, whose product is grouped as the .kiln's is.
  subroutine apply_diffusion_to_vn(u_vert, v_vert, primal_normal_vert_v1, primal_normal_vert_v2, z_nabla2_e, &
                                   inv_vert_vert_length, inv_primal_edge_length, area_edge, kh_smag_e, &
                                   diff_multfac_vn, nudgecoeff_e, vn, nudgezone_diff, fac_bdydiff_v, ividx, ivblk, &
                                   nproma, hs, he, vs, ve, start_2nd_nudge_line_idx_e, limited_area)
    real(wp), contiguous, intent(in) :: u_vert(:, :, :), v_vert(:, :, :), primal_normal_vert_v1(:, :, :), &
                                        primal_normal_vert_v2(:, :, :), z_nabla2_e(:, :, :), &
                                        inv_vert_vert_length(:, :), inv_primal_edge_length(:, :), area_edge(:, :), &
                                        kh_smag_e(:, :, :), diff_multfac_vn(:), nudgecoeff_e(:, :)
    real(wp), contiguous, intent(inout) :: vn(:, :, :)
    real(wp), intent(in) :: nudgezone_diff, fac_bdydiff_v
    integer, contiguous, intent(in) :: ividx(:, :, :), ivblk(:, :, :)
    integer, intent(in) :: nproma, hs, he, vs, ve, start_2nd_nudge_line_idx_e
    logical, intent(in) :: limited_area
    integer :: jb, jk, je, i_startblk, i_endblk, i_startidx, i_endidx, cut
    real(wp) :: area, kh, tangential, normal, z2, ivv, ipe, nabla4
    ! kiln::split: [hs, cut) and [cut, he), cut clipped to the domain.
    cut = min(max(start_2nd_nudge_line_idx_e, hs), max(he, hs))
    if (limited_area) then
      call block_range(hs, cut, nproma, i_startblk, i_endblk)
      do jb = i_startblk, i_endblk
        call get_indices(hs, cut, nproma, jb, i_startblk, i_endblk, i_startidx, i_endidx)
        do jk = vs + 1, ve
          do je = i_startidx, i_endidx
            vn(je, jk, jb) = vn(je, jk, jb) + area_edge(je, jb) * fac_bdydiff_v * z_nabla2_e(je, jk, jb)
          end do
        end do
      end do
    end if
    call block_range(cut, he, nproma, i_startblk, i_endblk)
    do jb = i_startblk, i_endblk
      call get_indices(cut, he, nproma, jb, i_startblk, i_endblk, i_startidx, i_endidx)
      do jk = vs + 1, ve
        do je = i_startidx, i_endidx
          ! nabla4 of vn, written out in the loop as ICON writes it: vertices
          ! 1, 2 are the edge's own (tangential), 3, 4 its cells' far ones (normal).
          tangential = (u_vert(ividx(je, jb, 1), jk, ivblk(je, jb, 1)) * primal_normal_vert_v1(je, 1, jb) &
                        + v_vert(ividx(je, jb, 1), jk, ivblk(je, jb, 1)) * primal_normal_vert_v2(je, 1, jb)) &
                       + (u_vert(ividx(je, jb, 2), jk, ivblk(je, jb, 2)) * primal_normal_vert_v1(je, 2, jb) &
                          + v_vert(ividx(je, jb, 2), jk, ivblk(je, jb, 2)) * primal_normal_vert_v2(je, 2, jb))
          normal = (u_vert(ividx(je, jb, 3), jk, ivblk(je, jb, 3)) * primal_normal_vert_v1(je, 3, jb) &
                    + v_vert(ividx(je, jb, 3), jk, ivblk(je, jb, 3)) * primal_normal_vert_v2(je, 3, jb)) &
                   + (u_vert(ividx(je, jb, 4), jk, ivblk(je, jb, 4)) * primal_normal_vert_v1(je, 4, jb) &
                      + v_vert(ividx(je, jb, 4), jk, ivblk(je, jb, 4)) * primal_normal_vert_v2(je, 4, jb))
          z2 = z_nabla2_e(je, jk, jb)
          ivv = inv_vert_vert_length(je, jb)
          ipe = inv_primal_edge_length(je, jb)
          nabla4 = 4.0_wp * ((normal - 2.0_wp * z2) * (ivv * ivv) + (tangential - 2.0_wp * z2) * (ipe * ipe))
          area = area_edge(je, jb)
          if (limited_area) then
            kh = max(nudgezone_diff * nudgecoeff_e(je, jb), kh_smag_e(je, jk, jb))
            vn(je, jk, jb) = vn(je, jk, jb) + area * (kh * z2 - area * diff_multfac_vn(jk) * nabla4)
          else
            vn(je, jk, jb) = vn(je, jk, jb) + area * (kh_smag_e(je, jk, jb) * z2 - diff_multfac_vn(jk) * nabla4 * area)
          end if
        end do
      end do
    end do
  end subroutine

  ! 4: diffusion of w and, for type_shear 2, its horizontal gradients
  ! (apply_diffusion_to_w_and_compute_horizontal_gradients_for_turbulence,
  ! a name past Fortran's 63 characters).
  ! Neighbours along C2E2CO: slot 1 is the cell itself, 2-4 across its edges.
  ! z_nabla2_c is scratch, computed (as the .kiln computes it) over the
  ! index hull of the diffused cells' neighbours, skipping missing ones.
  subroutine apply_diffusion_to_w_and_gradients_for_turbulence( &
      area, geofac_n2s, geofac_grg_x, geofac_grg_y, w_old, w, dwdx, dwdy, diff_multfac_w, diff_multfac_n2w, &
      z_nabla2_c, icidx, icblk, nproma, hs, he, vs, ve, type_shear, nrdmax, interior_idx, halo_idx)
    real(wp), contiguous, intent(in) :: area(:, :), geofac_n2s(:, :, :), geofac_grg_x(:, :, :), &
                                        geofac_grg_y(:, :, :), w_old(:, :, :), diff_multfac_n2w(:)
    real(wp), contiguous, intent(inout) :: w(:, :, :), dwdx(:, :, :), dwdy(:, :, :), z_nabla2_c(:, :, :)
    real(wp), intent(in) :: diff_multfac_w
    integer, contiguous, intent(in) :: icidx(:, :, :), icblk(:, :, :)
    integer, intent(in) :: nproma, hs, he, vs, ve, type_shear, nrdmax, interior_idx, halo_idx
    integer :: jb, jk, jc, j, i_startblk, i_endblk, i_startidx, i_endidx
    integer :: d0, d1, reach0, reach1, below_top0, damping1, n
    real(wp) :: s, nabla4, damped

    ! kiln::split of cells at interior_idx, then halo_idx: [d0, d1) is diffused.
    d0 = min(max(interior_idx, hs), max(he, hs))
    d1 = min(max(halo_idx, d0), max(he, d0))
    below_top0 = min(max(1, vs), max(ve, vs))        ! levels [vs, below_top0) are the top
    damping1 = min(max(nrdmax, below_top0), max(ve, below_top0))  ! [below_top0, damping1) the damping layer

    ! 1. The hull of the diffused cells' present neighbours (kiln::neighbour_hull).
    reach0 = huge(reach0)
    reach1 = 0
    call block_range(d0, d1, nproma, i_startblk, i_endblk)
    do jb = i_startblk, i_endblk
      call get_indices(d0, d1, nproma, jb, i_startblk, i_endblk, i_startidx, i_endidx)
      do j = 1, 4
        do jc = i_startidx, i_endidx
          if (icidx(jc, jb, j) > 0) then
            n = (icblk(jc, jb, j) - 1) * nproma + icidx(jc, jb, j) - 1
            reach0 = min(reach0, n)
            reach1 = max(reach1, n + 1)
          end if
        end do
      end do
    end do
    if (reach0 >= reach1) then
      reach0 = 0
      reach1 = 0
    end if
    call block_range(reach0, reach1, nproma, i_startblk, i_endblk)
    do jb = i_startblk, i_endblk
      call get_indices(reach0, reach1, nproma, jb, i_startblk, i_endblk, i_startidx, i_endidx)
      do jk = vs + 1, ve
        do jc = i_startidx, i_endidx
          s = 0.0_wp
          do j = 1, 4
            if (icidx(jc, jb, j) > 0) s = s + geofac_n2s(jc, j, jb) * w_old(icidx(jc, jb, j), jk, icblk(jc, jb, j))
          end do
          z_nabla2_c(jc, jk, jb) = s
        end do
      end do
    end do

    ! 2. Horizontal gradients for the 3D shear, below the top level.
    if (type_shear == 2) then
      call block_range(hs, he, nproma, i_startblk, i_endblk)
      do jb = i_startblk, i_endblk
        call get_indices(hs, he, nproma, jb, i_startblk, i_endblk, i_startidx, i_endidx)
        do jk = below_top0 + 1, ve
          do jc = i_startidx, i_endidx
            dwdx(jc, jk, jb) = geofac_grg_x(jc, 1, jb) * w_old(icidx(jc, jb, 1), jk, icblk(jc, jb, 1)) &
                               + geofac_grg_x(jc, 2, jb) * w_old(icidx(jc, jb, 2), jk, icblk(jc, jb, 2)) &
                               + geofac_grg_x(jc, 3, jb) * w_old(icidx(jc, jb, 3), jk, icblk(jc, jb, 3)) &
                               + geofac_grg_x(jc, 4, jb) * w_old(icidx(jc, jb, 4), jk, icblk(jc, jb, 4))
            dwdy(jc, jk, jb) = geofac_grg_y(jc, 1, jb) * w_old(icidx(jc, jb, 1), jk, icblk(jc, jb, 1)) &
                               + geofac_grg_y(jc, 2, jb) * w_old(icidx(jc, jb, 2), jk, icblk(jc, jb, 2)) &
                               + geofac_grg_y(jc, 3, jb) * w_old(icidx(jc, jb, 3), jk, icblk(jc, jb, 3)) &
                               + geofac_grg_y(jc, 4, jb) * w_old(icidx(jc, jb, 4), jk, icblk(jc, jb, 4))
          end do
        end do
      end do
    end if

    ! 3. w keeps w_old on the boundary [hs, d0) and the halo [d1, he).
    call keep(hs, d0)
    call keep(d1, he)
    ! ... and is w_old minus nabla4 on the diffused cells, plus the damping term in its layer.
    call block_range(d0, d1, nproma, i_startblk, i_endblk)
    do jb = i_startblk, i_endblk
      call get_indices(d0, d1, nproma, jb, i_startblk, i_endblk, i_startidx, i_endidx)
      do jk = vs + 1, ve
        do jc = i_startidx, i_endidx
          nabla4 = geofac_n2s(jc, 1, jb) * z_nabla2_c(icidx(jc, jb, 1), jk, icblk(jc, jb, 1)) &
                   + geofac_n2s(jc, 2, jb) * z_nabla2_c(icidx(jc, jb, 2), jk, icblk(jc, jb, 2)) &
                   + geofac_n2s(jc, 3, jb) * z_nabla2_c(icidx(jc, jb, 3), jk, icblk(jc, jb, 3)) &
                   + geofac_n2s(jc, 4, jb) * z_nabla2_c(icidx(jc, jb, 4), jk, icblk(jc, jb, 4))
          damped = w_old(jc, jk, jb) - diff_multfac_w * area(jc, jb) * area(jc, jb) * nabla4
          if (jk - 1 >= below_top0 .and. jk - 1 < damping1) then  ! invariant in jc: the compiler unswitches it
            w(jc, jk, jb) = damped + diff_multfac_n2w(jk) * area(jc, jb) * z_nabla2_c(jc, jk, jb)
          else
            w(jc, jk, jb) = damped
          end if
        end do
      end do
    end do
  contains
    subroutine keep(first, last)
      integer, intent(in) :: first, last
      integer :: kb, kk, kc, s_blk, e_blk, s_idx, e_idx
      call block_range(first, last, nproma, s_blk, e_blk)
      do kb = s_blk, e_blk
        call get_indices(first, last, nproma, kb, s_blk, e_blk, s_idx, e_idx)
        do kk = vs + 1, ve
          do kc = s_idx, e_idx
            w(kc, kk, kb) = w_old(kc, kk, kb)
          end do
        end do
      end do
    end subroutine
  end subroutine

  ! 5: full to half levels, from level 1 (0-based) on; level 0 stays.
  subroutine interpolate_cell_field_to_half_levels(wgtfac_c, interpolant, interpolation_to_half_levels, nproma, &
                                                   hs, he, vs, ve)
    real(wp), contiguous, intent(in) :: wgtfac_c(:, :, :), interpolant(:, :, :)
    real(wp), contiguous, intent(inout) :: interpolation_to_half_levels(:, :, :)
    integer, intent(in) :: nproma, hs, he, vs, ve
    integer :: jb, jk, jc, i_startblk, i_endblk, i_startidx, i_endidx
    call block_range(hs, he, nproma, i_startblk, i_endblk)
    do jb = i_startblk, i_endblk
      call get_indices(hs, he, nproma, jb, i_startblk, i_endblk, i_startidx, i_endidx)
      do jk = max(vs, 1) + 1, ve
        do jc = i_startidx, i_endidx
          interpolation_to_half_levels(jc, jk, jb) = wgtfac_c(jc, jk, jb) * interpolant(jc, jk, jb) &
                                                     + (1.0_wp - wgtfac_c(jc, jk, jb)) * interpolant(jc, jk - 1, jb)
        end do
      end do
    end do
  end subroutine

  ! 6: Thomas algorithm per column, forward sweep from the first level of the
  ! domain at or below level 1 (0-based), back substitution to it; z_alpha
  ! and z_w_expl have nlev + 1 levels.
  subroutine solve_tridiagonal_matrix_for_w(vwind_impl_wgt, theta_v_ic, ddqz_z_half, z_alpha, z_beta, z_w_expl, &
                                            z_exner_expl, z_q, w, dtime, cpd, nproma, hs, he, vs, ve)
    real(wp), contiguous, intent(in) :: vwind_impl_wgt(:, :), theta_v_ic(:, :, :), ddqz_z_half(:, :, :), &
                                        z_alpha(:, :, :), z_beta(:, :, :), z_w_expl(:, :, :), z_exner_expl(:, :, :)
    real(wp), contiguous, intent(inout) :: z_q(:, :, :), w(:, :, :)
    real(wp), intent(in) :: dtime, cpd
    integer, intent(in) :: nproma, hs, he, vs, ve
    integer :: jb, jk, jc, i_startblk, i_endblk, i_startidx, i_endidx, first
    real(wp) :: cq, dw, g, a, upper, b, d, normalisation
    first = max(vs, 1) + 1  ! 1-based
    call block_range(hs, he, nproma, i_startblk, i_endblk)
    do jb = i_startblk, i_endblk
      call get_indices(hs, he, nproma, jb, i_startblk, i_endblk, i_startidx, i_endidx)
      do jk = first, ve
        do jc = i_startidx, i_endidx
          if (jk == first) then  ! the upper boundary condition (cq, dw) = (0, 0)
            cq = 0.0_wp
            dw = 0.0_wp
          else
            cq = z_q(jc, jk - 1, jb)
            dw = w(jc, jk - 1, jb)
          end if
          g = dtime * cpd * vwind_impl_wgt(jc, jb) * theta_v_ic(jc, jk, jb) / ddqz_z_half(jc, jk, jb)
          a = -g * z_beta(jc, jk - 1, jb) * z_alpha(jc, jk - 1, jb)
          upper = -g * z_beta(jc, jk, jb) * z_alpha(jc, jk + 1, jb)
          b = 1.0_wp + g * z_alpha(jc, jk, jb) * (z_beta(jc, jk - 1, jb) + z_beta(jc, jk, jb))
          d = z_w_expl(jc, jk, jb) - g * (z_exner_expl(jc, jk - 1, jb) - z_exner_expl(jc, jk, jb))
          normalisation = 1.0_wp / (b + a * cq)
          z_q(jc, jk, jb) = -upper * normalisation
          w(jc, jk, jb) = (d - a * dw) * normalisation
        end do
      end do
      do jk = ve - 1, first, -1
        do jc = i_startidx, i_endidx
          w(jc, jk, jb) = w(jc, jk, jb) + w(jc, jk + 1, jb) * z_q(jc, jk, jb)
        end do
      end do
    end do
  end subroutine

  ! 7: theta_v and exner after the solver.
  subroutine update_theta_and_exner(theta_v, exner, area, z_temp, rd_o_cvd, nproma, hs, he, vs, ve)
    real(wp), contiguous, intent(inout) :: theta_v(:, :, :), exner(:, :, :)
    real(wp), contiguous, intent(in) :: area(:, :), z_temp(:, :, :)
    real(wp), intent(in) :: rd_o_cvd
    integer, intent(in) :: nproma, hs, he, vs, ve
    integer :: jb, jk, jc, i_startblk, i_endblk, i_startidx, i_endidx
    real(wp) :: th0, th
    call block_range(hs, he, nproma, i_startblk, i_endblk)
    do jb = i_startblk, i_endblk
      call get_indices(hs, he, nproma, jb, i_startblk, i_endblk, i_startidx, i_endidx)
      do jk = vs + 1, ve
        do jc = i_startidx, i_endidx
          th0 = theta_v(jc, jk, jb)
          th = th0 + area(jc, jb) * z_temp(jc, jk, jb)
          exner(jc, jk, jb) = exner(jc, jk, jb) * (1.0_wp + rd_o_cvd * (th / th0 - 1.0_wp))
          theta_v(jc, jk, jb) = th
        end do
      end do
    end do
  end subroutine

end module icon_kernels
