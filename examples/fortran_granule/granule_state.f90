! The granule's fields in ICON's layout: (nproma, nlev, nblks) per entity
! kind, (nproma, nblks) for horizontal-only fields, (nlev) for vertical-only
! ones, coefficient arrays (nproma, n, nblks). Each kind has its own nproma:
! the Fortran reference uses one for all, as ICON does; kiln's flat layout
! takes nproma = the kind's entity count (one block, so field(:, :, 1) is the
! (n, nlev) array kiln's kernels are written over).
!
! Inputs are random in the ranges of Granule::make_fields
! (granule/granule.cpp), drawn from a generator seeded the same for
! every state in the same order: states of any nproma hold the same values.
module granule_state
  use, intrinsic :: iso_c_binding, only: wp => c_double
  use granule_grid, only: CELLS, EDGES, VERTICES
  implicit none
  private

  type, public :: state_t
    integer :: n(0:2) = 0       ! entities per kind
    integer :: nproma(0:2) = 0  ! per kind
    integer :: nblks(0:2) = 0
    integer :: nlev = 0
    integer :: now = 1          ! w is w_both(:, :, :, now), w_old the other
    ! 1 temporary_fields_for_turbulence_diagnostics
    real(wp), allocatable :: kh_smag_ec(:, :, :), vn(:, :, :), e_bln_c_s(:, :, :), geofac_div(:, :, :), &
                             diff_multfac_smag(:), kh_c(:, :, :), div(:, :, :)
    ! 2 mo_intp_rbf_rbf_vec_interpol_vertex
    real(wp), allocatable :: ptr_coeff_1(:, :, :), ptr_coeff_2(:, :, :), u_vert(:, :, :), v_vert(:, :, :)
    ! 3 apply_diffusion_to_vn
    real(wp), allocatable :: primal_normal_vert_v1(:, :, :), primal_normal_vert_v2(:, :, :), z_nabla2_e(:, :, :), &
                             inv_vert_vert_length(:, :), inv_primal_edge_length(:, :), area_edge(:, :), &
                             kh_smag_e(:, :, :), diff_multfac_vn(:), nudgecoeff_e(:, :)
    ! 4 apply_diffusion_to_w_and_compute_horizontal_gradients_for_turbulence
    real(wp), allocatable :: area(:, :), geofac_n2s(:, :, :), geofac_grg_x(:, :, :), geofac_grg_y(:, :, :), &
                             w_both(:, :, :, :), dwdx(:, :, :), dwdy(:, :, :), diff_multfac_n2w(:), z_nabla2_c(:, :, :)
    ! 5 interpolate_cell_field_to_half_levels
    real(wp), allocatable :: wgtfac_c(:, :, :), theta_v(:, :, :), theta_v_ic(:, :, :)
    ! 6 solve_tridiagonal_matrix_for_w (z_alpha and z_w_expl have nlev + 1 levels)
    real(wp), allocatable :: vwind_impl_wgt(:, :), ddqz_z_half(:, :, :), z_alpha(:, :, :), z_beta(:, :, :), &
                             z_w_expl(:, :, :), z_exner_expl(:, :, :), z_q(:, :, :)
    ! 7 update_theta_and_exner
    real(wp), allocatable :: exner(:, :, :), z_temp(:, :, :)
  end type

  public :: make_state, swap_w

contains

  ! Every field of a state with `nproma(kind)` columns per block, inputs drawn
  ! from `seed`, outputs 0 (block padding too).
  subroutine make_state(s, n, nproma, nlev, seed)
    type(state_t), intent(out) :: s
    integer, intent(in) :: n(0:2), nproma(0:2), nlev, seed
    integer :: k
    s%n = n
    s%nproma = nproma
    s%nblks = (n + nproma - 1) / nproma
    s%nlev = nlev
    k = nlev
    call seed_generator(seed)
    ! The order and ranges of Granule::make_fields.
    call field(s%kh_smag_ec, EDGES, k, 0.0_wp, 1.0_wp)
    call field(s%vn, EDGES, k, -10.0_wp, 10.0_wp)
    call field(s%e_bln_c_s, CELLS, 3, 0.2_wp, 0.4_wp)
    call field(s%geofac_div, CELLS, 3, -1.0_wp, 1.0_wp)
    call levels(s%diff_multfac_smag, 0.5_wp, 1.5_wp)
    call field(s%kh_c, CELLS, k, 0.0_wp, 0.0_wp)
    call field(s%div, CELLS, k, 0.0_wp, 0.0_wp)
    call field(s%ptr_coeff_1, VERTICES, 6, -0.2_wp, 0.2_wp)
    call field(s%ptr_coeff_2, VERTICES, 6, -0.2_wp, 0.2_wp)
    call field(s%u_vert, VERTICES, k, 0.0_wp, 0.0_wp)
    call field(s%v_vert, VERTICES, k, 0.0_wp, 0.0_wp)
    call field(s%primal_normal_vert_v1, EDGES, 4, -1.0_wp, 1.0_wp)
    call field(s%primal_normal_vert_v2, EDGES, 4, -1.0_wp, 1.0_wp)
    call field(s%z_nabla2_e, EDGES, k, -1.0_wp, 1.0_wp)
    call horizontal(s%inv_vert_vert_length, EDGES, 0.5_wp, 1.5_wp)
    call horizontal(s%inv_primal_edge_length, EDGES, 0.5_wp, 1.5_wp)
    call horizontal(s%area_edge, EDGES, 0.005_wp, 0.015_wp)
    call field(s%kh_smag_e, EDGES, k, 0.0_wp, 0.1_wp)
    call levels(s%diff_multfac_vn, 0.0_wp, 0.01_wp)
    call horizontal(s%nudgecoeff_e, EDGES, 0.0_wp, 1.0_wp)
    call horizontal(s%area, CELLS, 0.005_wp, 0.015_wp)
    call field(s%geofac_n2s, CELLS, 4, -0.5_wp, 0.5_wp)
    call field(s%geofac_grg_x, CELLS, 4, -0.5_wp, 0.5_wp)
    call field(s%geofac_grg_y, CELLS, 4, -0.5_wp, 0.5_wp)
    allocate(s%w_both(s%nproma(CELLS), k, s%nblks(CELLS), 2))
    s%w_both = 0
    s%now = 1
    call draw_into(s%w_both(:, :, :, 2), CELLS, -1.0_wp, 1.0_wp)  ! w_old
    call field(s%dwdx, CELLS, k, 0.0_wp, 0.0_wp)
    call field(s%dwdy, CELLS, k, 0.0_wp, 0.0_wp)
    call levels(s%diff_multfac_n2w, 0.0_wp, 0.01_wp)
    call field(s%z_nabla2_c, CELLS, k, 0.0_wp, 0.0_wp)
    call field(s%wgtfac_c, CELLS, k, 0.3_wp, 0.7_wp)
    call field(s%theta_v, CELLS, k, 280.0_wp, 320.0_wp)
    call field(s%theta_v_ic, CELLS, k, 0.0_wp, 0.0_wp)
    call horizontal(s%vwind_impl_wgt, CELLS, 0.5_wp, 0.7_wp)
    call field(s%ddqz_z_half, CELLS, k, 100.0_wp, 500.0_wp)
    call field(s%z_alpha, CELLS, k + 1, 1e-4_wp, 2e-4_wp)
    call field(s%z_beta, CELLS, k, 0.05_wp, 0.15_wp)
    call field(s%z_w_expl, CELLS, k + 1, -1.0_wp, 1.0_wp)
    call field(s%z_exner_expl, CELLS, k, -1e-4_wp, 1e-4_wp)
    call field(s%z_q, CELLS, k, 0.0_wp, 0.0_wp)
    call field(s%exner, CELLS, k, 0.7_wp, 1.0_wp)
    call field(s%z_temp, CELLS, k, -0.1_wp, 0.1_wp)
  contains
    ! (nproma, m, nblks) of kind `kind`, drawn from [lo, hi) unless lo == hi (then lo).
    subroutine field(x, kind, m, lo, hi)
      real(wp), allocatable, intent(out) :: x(:, :, :)
      integer, intent(in) :: kind, m
      real(wp), intent(in) :: lo, hi
      allocate(x(s%nproma(kind), m, s%nblks(kind)))
      x = lo
      if (hi > lo) call draw_into(x, kind, lo, hi)
    end subroutine
    subroutine horizontal(x, kind, lo, hi)
      real(wp), allocatable, intent(out) :: x(:, :)
      integer, intent(in) :: kind
      real(wp), intent(in) :: lo, hi
      real(wp), allocatable :: x3(:, :, :)
      call field(x3, kind, 1, lo, hi)
      x = x3(:, 1, :)
    end subroutine
    subroutine levels(x, lo, hi)
      real(wp), allocatable, intent(out) :: x(:)
      real(wp), intent(in) :: lo, hi
      allocate(x(s%nlev))
      call random_number(x)
      x = lo + (hi - lo) * x
    end subroutine
    ! Values in flat order (entity, then column: Field::fill_random's order)
    ! put where this state's blocks keep them; the padding keeps its value.
    subroutine draw_into(x, kind, lo, hi)
      real(wp), intent(inout) :: x(:, :, :)
      integer, intent(in) :: kind
      real(wp), intent(in) :: lo, hi
      real(wp), allocatable :: flat(:, :)  ! heap: a large grid's field overflows the stack
      allocate(flat(s%n(kind), size(x, 2)))
      call random_number(flat)
      flat = lo + (hi - lo) * flat
      call from_flat(flat, x)
    end subroutine
  end subroutine

  ! The same sequence for the same seed, whatever was drawn before.
  subroutine seed_generator(seed)
    integer, intent(in) :: seed
    integer, allocatable :: state(:)
    integer :: n, i
    call random_seed(size=n)
    allocate(state(n))
    state = [(seed * 7919 + 104729 * i, i = 1, n)]
    call random_seed(put=state)
  end subroutine

  ! flat(c + 1, j) into x(jc, j, jb) for c = (jb - 1) * nproma + jc - 1.
  subroutine from_flat(flat, x)
    real(wp), intent(in) :: flat(:, :)
    real(wp), intent(inout) :: x(:, :, :)
    integer :: c, np
    np = size(x, 1)
    do c = 0, size(flat, 1) - 1
      x(mod(c, np) + 1, :, c / np + 1) = flat(c + 1, :)
    end do
  end subroutine

  ! The end of a step: this step's w is the next one's w_old.
  subroutine swap_w(s)
    type(state_t), intent(inout) :: s
    s%now = 3 - s%now
  end subroutine

end module granule_state
