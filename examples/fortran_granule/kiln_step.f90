! kiln's side of a step: the seven kernels resolved once for a state's
! layout (specialised on the domains, the static values and every array's
! strides, as the C++ granule specialises them), then stage i called on it.
!
! Two layouts of the same fields:
!   flat:    the state has one block per kind of exactly its entity count, and
!            kiln gets field(:, :, 1), the (n, nlev) array its kernels are
!            written over (the layout of the C++ granule);
!   blocked: kiln gets ICON's (nproma, nlev, nblks) arrays themselves
!            (kiln_set_blocked_like), the kernels unchanged.
! Connectivity is kiln's flat 0-based table in both: table(e, j), -1 missing.
module kiln_step
  use, intrinsic :: iso_c_binding
  use kiln
  use granule_state, only: state_t
  use granule_stages
  implicit none
  private

  ! kiln's tables (n_entities, n) for the four the stages read.
  type, public :: flat_tables_t
    integer(c_int32_t), allocatable :: c2e(:, :), v2e(:, :), e2c2v(:, :), c2e2co(:, :)
  end type

  type, public :: kiln_granule_t
    type(kiln_runtime) :: rt
    type(kiln_kernel) :: kernels(N_STAGES)
    logical :: blocked = .false.
  end type

  public :: resolve_kernels, run_kiln_stage

contains

  ! Resolves the seven kernels in `rt` (the runtime is the caller's: kiln_init
  ! before, kiln_finalize after) for state `s` in the given layout.
  subroutine resolve_kernels(k, st, s, t, blocked)
    type(kiln_granule_t), intent(inout) :: k
    type(stages_t), intent(in) :: st
    type(state_t), target, intent(in) :: s
    type(flat_tables_t), target, intent(in) :: t
    logical, intent(in) :: blocked
    type(kiln_spec) :: spec
    integer :: i
    k%blocked = blocked
    do i = 1, N_STAGES
      call kiln_init(spec)
      call kiln_set(spec, 'horizontal_start', st%domain(i)%hs)
      call kiln_set(spec, 'horizontal_end', st%domain(i)%he)
      call kiln_set(spec, 'vertical_start', st%domain(i)%vs)
      call kiln_set(spec, 'vertical_end', st%domain(i)%ve)
      select case (i)
      case (1)
        call f3('kh_smag_ec', s%kh_smag_ec); call f3('vn', s%vn); call f3('e_bln_c_s', s%e_bln_c_s)
        call f3('geofac_div', s%geofac_div); call f1('diff_multfac_smag', s%diff_multfac_smag)
        call f3('kh_c', s%kh_c); call f3('div', s%div); call table('C2E', t%c2e)
      case (2)
        call f3('p_e_in', s%vn); call f3('ptr_coeff_1', s%ptr_coeff_1); call f3('ptr_coeff_2', s%ptr_coeff_2)
        call f3('p_u_out', s%u_vert); call f3('p_v_out', s%v_vert); call table('V2E', t%v2e)
      case (3)
        call kiln_set(spec, 'start_2nd_nudge_line_idx_e', st%start_2nd_nudge_line_idx_e)
        call kiln_set(spec, 'limited_area', st%limited_area)
        call f3('u_vert', s%u_vert); call f3('v_vert', s%v_vert)
        call f3('primal_normal_vert_v1', s%primal_normal_vert_v1)
        call f3('primal_normal_vert_v2', s%primal_normal_vert_v2); call f3('z_nabla2_e', s%z_nabla2_e)
        call f2('inv_vert_vert_length', s%inv_vert_vert_length)
        call f2('inv_primal_edge_length', s%inv_primal_edge_length); call f2('area_edge', s%area_edge)
        call f3('kh_smag_e', s%kh_smag_e); call f1('diff_multfac_vn', s%diff_multfac_vn)
        call f2('nudgecoeff_e', s%nudgecoeff_e); call f3('vn', s%vn); call table('E2C2V', t%e2c2v)
      case (4)
        call kiln_set(spec, 'type_shear', TYPE_SHEAR)
        call kiln_set(spec, 'nrdmax', st%nrdmax)
        call kiln_set(spec, 'interior_idx', st%interior_idx)
        call kiln_set(spec, 'halo_idx', st%halo_idx)
        call f2('area', s%area); call f3('geofac_n2s', s%geofac_n2s); call f3('geofac_grg_x', s%geofac_grg_x)
        call f3('geofac_grg_y', s%geofac_grg_y); call f3('w_old', s%w_both(:, :, :, 1))
        call f3('w', s%w_both(:, :, :, 2)); call f3('dwdx', s%dwdx); call f3('dwdy', s%dwdy)
        call f1('diff_multfac_n2w', s%diff_multfac_n2w)  ! z_nabla2_c: kiln's temporary, laid out as w_old
        call table('C2E2CO', t%c2e2co)
      case (5)
        call f3('wgtfac_c', s%wgtfac_c); call f3('interpolant', s%theta_v)
        call f3('interpolation_to_half_levels', s%theta_v_ic)
      case (6)
        call f2('vwind_impl_wgt', s%vwind_impl_wgt); call f3('theta_v_ic', s%theta_v_ic)
        call f3('ddqz_z_half', s%ddqz_z_half); call f3('z_alpha', s%z_alpha); call f3('z_beta', s%z_beta)
        call f3('z_w_expl', s%z_w_expl); call f3('z_exner_expl', s%z_exner_expl); call f3('z_q', s%z_q)
        call f3('w', s%w_both(:, :, :, 1))
      case (7)
        call kiln_set(spec, 'rd_o_cvd', RD_O_CVD)
        call f3('theta_v', s%theta_v); call f3('exner', s%exner); call f2('area', s%area)
        call f3('z_temp', s%z_temp)
      end select
      call kiln_get(k%rt, trim(STAGE_NAMES(i)), spec, k%kernels(i))
      call kiln_finalize(spec)
    end do
  contains
    ! An array over (horizontal, m): its strides, or ICON's blocks and their strides.
    subroutine f3(name, x)
      character(*), intent(in) :: name
      real(c_double), target, intent(in) :: x(:, :, :)
      if (blocked) then
        call kiln_set_blocked_like(spec, name, x)
      else
        call kiln_set_strides_of(spec, name, x(:, :, 1))
      end if
    end subroutine
    ! A horizontal-only array.
    subroutine f2(name, x)
      character(*), intent(in) :: name
      real(c_double), target, intent(in) :: x(:, :)
      if (blocked) then
        call kiln_set_blocked_like(spec, name, x)
      else
        call kiln_set_strides_of(spec, name, x(:, 1))
      end if
    end subroutine
    ! A vertical-only array: never blocked.
    subroutine f1(name, x)
      character(*), intent(in) :: name
      real(c_double), target, intent(in) :: x(:)
      call kiln_set_strides_of(spec, name, x)
    end subroutine
    subroutine table(name, x)
      character(*), intent(in) :: name
      integer(c_int32_t), target, intent(in) :: x(:, :)
      call kiln_set_strides_of(spec, name, x)
    end subroutine
  end subroutine

  ! Stage i on `s`, with its arguments in the kernel's order, as a model
  ! writes the call (the views are made at each call).
  subroutine run_kiln_stage(i, k, s, t)
    integer, intent(in) :: i
    type(kiln_granule_t), intent(in) :: k
    type(state_t), target, intent(inout) :: s
    type(flat_tables_t), target, intent(in) :: t
    integer :: w, w_old
    w = s%now
    w_old = 3 - s%now
    select case (i)
    case (1)
      call kiln_call(k%kernels(1), [a3(s%kh_smag_ec), a3(s%vn), a3(s%e_bln_c_s), a3(s%geofac_div), &
                                    kiln_array(s%diff_multfac_smag), a3(s%kh_c), a3(s%div), kiln_array(t%c2e)])
    case (2)
      call kiln_call(k%kernels(2), [a3(s%vn), a3(s%ptr_coeff_1), a3(s%ptr_coeff_2), a3(s%u_vert), a3(s%v_vert), &
                                    kiln_array(t%v2e)])
    case (3)
      call kiln_call(k%kernels(3), [a3(s%u_vert), a3(s%v_vert), a3(s%primal_normal_vert_v1), &
                                    a3(s%primal_normal_vert_v2), a3(s%z_nabla2_e), a2(s%inv_vert_vert_length), &
                                    a2(s%inv_primal_edge_length), a2(s%area_edge), a3(s%kh_smag_e), &
                                    kiln_array(s%diff_multfac_vn), a2(s%nudgecoeff_e), a3(s%vn), &
                                    kiln_scalar(NUDGEZONE_DIFF), kiln_scalar(FAC_BDYDIFF_V), kiln_array(t%e2c2v)])
    case (4)
      call kiln_call(k%kernels(4), [a2(s%area), a3(s%geofac_n2s), a3(s%geofac_grg_x), a3(s%geofac_grg_y), &
                                    a3(s%w_both(:, :, :, w_old)), a3(s%w_both(:, :, :, w)), a3(s%dwdx), &
                                    a3(s%dwdy), kiln_scalar(DIFF_MULTFAC_W), kiln_array(s%diff_multfac_n2w), &
                                    kiln_array(t%c2e2co)])
    case (5)
      call kiln_call(k%kernels(5), [a3(s%wgtfac_c), a3(s%theta_v), a3(s%theta_v_ic)])
    case (6)
      call kiln_call(k%kernels(6), [a2(s%vwind_impl_wgt), a3(s%theta_v_ic), a3(s%ddqz_z_half), a3(s%z_alpha), &
                                    a3(s%z_beta), a3(s%z_w_expl), a3(s%z_exner_expl), a3(s%z_q), &
                                    a3(s%w_both(:, :, :, w)), kiln_scalar(DTIME), kiln_scalar(CPD)])
    case (7)
      call kiln_call(k%kernels(7), [a3(s%theta_v), a3(s%exner), a2(s%area), a3(s%z_temp)])
    end select
  contains
    type(kiln_arg) function a3(x)
      real(c_double), target, intent(in) :: x(:, :, :)
      if (k%blocked) then
        a3 = kiln_array(x)
      else
        a3 = kiln_array(x(:, :, 1))
      end if
    end function
    type(kiln_arg) function a2(x)
      real(c_double), target, intent(in) :: x(:, :)
      if (k%blocked) then
        a2 = kiln_array(x)
      else
        a2 = kiln_array(x(:, 1))
      end if
    end function
  end subroutine

end module kiln_step
