! What the seven stages of a step run over, shared by the kiln side and the
! Fortran reference: their names, domains and static values, the values of
! Granule::add_stages (granule/granule.cpp) for the same grid.
module granule_stages
  use, intrinsic :: iso_c_binding, only: wp => c_double
  use granule_grid, only: grid_t, zones_t, grid_zones, CELLS, EDGES, VERTICES
  implicit none
  private

  integer, parameter, public :: N_STAGES = 7
  character(*), parameter, public :: STAGE_NAMES(N_STAGES) = [character(72) :: &
    'temporary_fields_for_turbulence_diagnostics', 'mo_intp_rbf_rbf_vec_interpol_vertex', &
    'apply_diffusion_to_vn', 'apply_diffusion_to_w_and_compute_horizontal_gradients_for_turbulence', &
    'interpolate_cell_field_to_half_levels', 'solve_tridiagonal_matrix_for_w', 'update_theta_and_exner']

  ! The granule's physical constants and scalar arguments (ICON's values).
  real(wp), parameter, public :: DTIME = 10.0_wp, CPD = 1004.64_wp, RD_O_CVD = 287.04_wp / 717.6_wp, &
                                 NUDGEZONE_DIFF = 1.0_wp / 3.0_wp, FAC_BDYDIFF_V = 0.2_wp, DIFF_MULTFAC_W = 0.01_wp
  integer, parameter, public :: TYPE_SHEAR = 2

  ! Domains, 0-based and end-exclusive as kiln's.
  type, public :: domain_t
    integer :: hs = 0, he = 0, vs = 0, ve = 0
  end type

  type, public :: stages_t
    type(domain_t) :: domain(N_STAGES)
    logical :: limited_area = .false.
    integer :: start_2nd_nudge_line_idx_e = 0  ! stage 3
    integer :: nrdmax = 0, interior_idx = 0, halo_idx = 0  ! stage 4
  end type

  public :: make_stages

contains

  function make_stages(grid, nlev) result(st)
    type(grid_t), intent(in) :: grid
    integer, intent(in) :: nlev
    type(stages_t) :: st
    type(zones_t) :: z
    z = grid_zones(grid)
    st%limited_area = grid%limited_area
    ! 1: cells from boundary row 2 on (every cell there has its three edges)
    st%domain(1) = domain_t(z%cells_from_row2, grid%n(CELLS), 0, nlev)
    ! 2: vertices from boundary row 2 on (missing edges are skipped)
    st%domain(2) = domain_t(z%vertices_from_row2, grid%n(VERTICES), 0, nlev)
    ! 3: edges from boundary row 5 on, nabla4 from the second nudging row
    st%domain(3) = domain_t(z%edges_from_row5, grid%n(EDGES), 0, nlev)
    st%start_2nd_nudge_line_idx_e = z%start_2nd_nudge_line_e
    ! 4: cells from boundary row 2 on; diffused from the interior zone; 3D shear
    st%domain(4) = domain_t(z%cells_from_row2, grid%n(CELLS), 0, nlev)
    st%nrdmax = max(2, nlev / 8)
    st%interior_idx = z%interior_c
    st%halo_idx = grid%n(CELLS)
    ! 5: every cell, half levels 1 .. nlev - 1
    st%domain(5) = domain_t(0, grid%n(CELLS), 1, nlev)
    ! 6: every column, levels 1 .. nlev - 1 (w at the top stays)
    st%domain(6) = domain_t(0, grid%n(CELLS), 1, nlev)
    ! 7: every cell and level
    st%domain(7) = domain_t(0, grid%n(CELLS), 0, nlev)
  end function

end module granule_stages
