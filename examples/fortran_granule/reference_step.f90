! The Fortran reference's side of a step: stage i of the granule through
! module icon_kernels on a state in ICON's layout, with ICON's index and
! block connectivity for the state's nproma.
module reference_step
  use granule_grid, only: grid_t, icon_neighbours, CELLS, EDGES, VERTICES
  use granule_state, only: state_t
  use granule_stages
  use icon_kernels
  implicit none
  private

  ! The four tables the stages read, as ICON keeps them: (nproma, nblks, n), 1-based.
  type, public :: icon_connectivity_t
    integer :: nproma = 0
    integer, allocatable :: c2e_idx(:, :, :), c2e_blk(:, :, :), v2e_idx(:, :, :), v2e_blk(:, :, :), &
                            e2c2v_idx(:, :, :), e2c2v_blk(:, :, :), c2e2co_idx(:, :, :), c2e2co_blk(:, :, :)
  end type

  public :: make_icon_connectivity, run_reference_stage

contains

  function make_icon_connectivity(grid, nproma) result(c)
    type(grid_t), intent(in) :: grid
    integer, intent(in) :: nproma
    type(icon_connectivity_t) :: c
    c%nproma = nproma
    call icon_neighbours(grid, 'C2E', grid%n(CELLS), nproma, c%c2e_idx, c%c2e_blk)
    call icon_neighbours(grid, 'V2E', grid%n(VERTICES), nproma, c%v2e_idx, c%v2e_blk)
    call icon_neighbours(grid, 'E2C2V', grid%n(EDGES), nproma, c%e2c2v_idx, c%e2c2v_blk)
    call icon_neighbours(grid, 'C2E2CO', grid%n(CELLS), nproma, c%c2e2co_idx, c%c2e2co_blk)
  end function

  ! Stage i (1 to 7) on `s`, whose nproma must be c%nproma for every kind.
  subroutine run_reference_stage(i, st, s, c)
    integer, intent(in) :: i
    type(stages_t), intent(in) :: st
    type(state_t), intent(inout) :: s
    type(icon_connectivity_t), intent(in) :: c
    integer :: np, w, w_old
    np = c%nproma
    w = s%now
    w_old = 3 - s%now
    associate (d => st%domain(i))
      select case (i)
      case (1)
        call temporary_fields_for_turbulence_diagnostics(s%kh_smag_ec, s%vn, s%e_bln_c_s, s%geofac_div, &
          s%diff_multfac_smag, s%kh_c, s%div, c%c2e_idx, c%c2e_blk, np, d%hs, d%he, d%vs, d%ve)
      case (2)
        call mo_intp_rbf_rbf_vec_interpol_vertex(s%vn, s%ptr_coeff_1, s%ptr_coeff_2, s%u_vert, s%v_vert, &
          c%v2e_idx, c%v2e_blk, np, d%hs, d%he, d%vs, d%ve)
      case (3)
        call apply_diffusion_to_vn(s%u_vert, s%v_vert, s%primal_normal_vert_v1, s%primal_normal_vert_v2, &
          s%z_nabla2_e, s%inv_vert_vert_length, s%inv_primal_edge_length, s%area_edge, s%kh_smag_e, &
          s%diff_multfac_vn, s%nudgecoeff_e, s%vn, NUDGEZONE_DIFF, FAC_BDYDIFF_V, c%e2c2v_idx, c%e2c2v_blk, &
          np, d%hs, d%he, d%vs, d%ve, st%start_2nd_nudge_line_idx_e, st%limited_area)
      case (4)
        call apply_diffusion_to_w_and_gradients_for_turbulence(s%area, s%geofac_n2s, &
          s%geofac_grg_x, s%geofac_grg_y, s%w_both(:, :, :, w_old), s%w_both(:, :, :, w), s%dwdx, s%dwdy, &
          DIFF_MULTFAC_W, s%diff_multfac_n2w, s%z_nabla2_c, c%c2e2co_idx, c%c2e2co_blk, np, &
          d%hs, d%he, d%vs, d%ve, TYPE_SHEAR, st%nrdmax, st%interior_idx, st%halo_idx)
      case (5)
        call interpolate_cell_field_to_half_levels(s%wgtfac_c, s%theta_v, s%theta_v_ic, np, d%hs, d%he, d%vs, d%ve)
      case (6)
        call solve_tridiagonal_matrix_for_w(s%vwind_impl_wgt, s%theta_v_ic, s%ddqz_z_half, s%z_alpha, s%z_beta, &
          s%z_w_expl, s%z_exner_expl, s%z_q, s%w_both(:, :, :, w), DTIME, CPD, np, d%hs, d%he, d%vs, d%ve)
      case (7)
        call update_theta_and_exner(s%theta_v, s%exner, s%area, s%z_temp, RD_O_CVD, np, d%hs, d%he, d%vs, d%ve)
      end select
    end associate
  end subroutine

end module reference_step
