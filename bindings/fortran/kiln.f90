! kiln from Fortran 2018: module kiln, over the C ABI (kiln/kiln.h).
!
! Arrays pass as assumed-rank descriptors (ISO_Fortran_binding.h): any array
! or section, contiguous or not, with its real strides and no copy. Give them
! the TARGET attribute: a view (kiln_array) keeps the array's address until
! the call. Errors follow Fortran's intrinsics: an optional stat (0 on
! success, else a KILN_ERROR_* status) and errmsg receive a failure; without
! stat, the message is printed and the program ends with error stop.
module kiln
  use, intrinsic :: iso_c_binding
  use, intrinsic :: iso_fortran_env, only: error_unit
  implicit none
  private

  integer, parameter, public :: KILN_OK = 0, KILN_ERROR = 1, KILN_ERROR_INVALID_ARGUMENT = 2, &
                                KILN_ERROR_UNKNOWN_KERNEL = 3, KILN_ERROR_KERNEL_SOURCE = 4, KILN_ERROR_SPEC = 5, &
                                KILN_ERROR_ARGUMENT = 6, KILN_ERROR_COMPILE = 7, KILN_ERROR_TOOLCHAIN = 8, &
                                KILN_ERROR_LOAD = 9, KILN_ERROR_GPU = 10, KILN_ERROR_OUT_OF_MEMORY = 11, &
                                KILN_ERROR_INTERNAL = 12

  ! One argument of a call, laid out as C's kiln_arg (88 bytes). Fortran has
  ! no unions: `scalar` holds the bits of the value (kiln_scalar sets them).
  type, bind(c), public :: kiln_arg
    type(c_ptr) :: data
    integer(c_int64_t) :: shape(4)
    integer(c_int64_t) :: strides(4)
    integer(c_int64_t) :: scalar
    integer(c_int32_t) :: type
    integer(c_int32_t) :: rank
  end type

  type, public :: kiln_runtime
    type(c_ptr) :: handle = c_null_ptr
  end type
  type, public :: kiln_spec
    type(c_ptr) :: handle = c_null_ptr
  end type
  type, public :: kiln_kernel
    type(c_ptr) :: handle = c_null_ptr  ! valid while its runtime lives
  end type

  public :: kiln_report  ! for module kiln_mpi
  public :: kiln_init, kiln_finalize, kiln_register, kiln_register_file, kiln_set, kiln_set_run_time, &
            kiln_set_strides_of, kiln_set_blocked, &
            kiln_set_blocked_like, kiln_flat_table, kiln_get, &
            kiln_call, kiln_view, kiln_array, kiln_scalar, kiln_last_error, kiln_wait_for_specialised

  interface kiln_init
    module procedure init_runtime, init_spec
  end interface
  interface kiln_finalize
    module procedure finalize_runtime, finalize_spec
  end interface
  interface kiln_set
    module procedure set_i32, set_i64, set_f64, set_logical
  end interface
  interface kiln_scalar
    module procedure scalar_f64, scalar_f32, scalar_i32, scalar_i64, scalar_logical
  end interface

  interface
    function c_last_error() bind(c, name="kiln_last_error") result(p)
      import :: c_ptr
      type(c_ptr) :: p
    end function
    function c_strlen(s) bind(c, name="strlen") result(n)
      import :: c_ptr, c_size_t
      type(c_ptr), value :: s
      integer(c_size_t) :: n
    end function
    function c_runtime_create(out) bind(c, name="kiln_runtime_create") result(s)
      import :: c_ptr, c_int
      type(c_ptr), intent(out) :: out
      integer(c_int) :: s
    end function
    function c_config_from_env(out) bind(c, name="kiln_config_from_env") result(s)
      import :: c_ptr, c_int
      type(c_ptr), intent(out) :: out
      integer(c_int) :: s
    end function
    subroutine c_config_destroy(config) bind(c, name="kiln_config_destroy")
      import :: c_ptr
      type(c_ptr), value :: config
    end subroutine
    function c_config_set_check(config, enabled) bind(c, name="kiln_config_set_check") result(s)
      import :: c_ptr, c_int
      type(c_ptr), value :: config
      integer(c_int), value :: enabled
      integer(c_int) :: s
    end function
    function c_config_set_threads(config, threads) bind(c, name="kiln_config_set_threads") result(s)
      import :: c_ptr, c_int
      type(c_ptr), value :: config
      integer(c_int), value :: threads
      integer(c_int) :: s
    end function
    function c_config_set_target_cpu(config, cpu) bind(c, name="kiln_config_set_target_cpu") result(s)
      import :: c_ptr, c_int, c_char
      type(c_ptr), value :: config
      character(kind=c_char), intent(in) :: cpu(*)
      integer(c_int) :: s
    end function
    function c_config_set_gather(config, gather) bind(c, name="kiln_config_set_gather") result(s)
      import :: c_ptr, c_int, c_char
      type(c_ptr), value :: config
      character(kind=c_char), intent(in) :: gather(*)
      integer(c_int) :: s
    end function
    function c_config_set_tiered(config, enabled) bind(c, name="kiln_config_set_tiered") result(s)
      import :: c_ptr, c_int
      type(c_ptr), value :: config
      integer(c_int), value :: enabled
      integer(c_int) :: s
    end function
    function c_wait_for_specialised(rt) bind(c, name="kiln_wait_for_specialised") result(s)
      import :: c_ptr, c_int
      type(c_ptr), value :: rt
      integer(c_int) :: s
    end function
    function c_runtime_create_from_config(config, out) bind(c, name="kiln_runtime_create_from_config") result(s)
      import :: c_ptr, c_int
      type(c_ptr), value :: config
      type(c_ptr), intent(out) :: out
      integer(c_int) :: s
    end function
    subroutine c_runtime_destroy(rt) bind(c, name="kiln_runtime_destroy")
      import :: c_ptr
      type(c_ptr), value :: rt
    end subroutine
    function c_register_kernel(rt, text, file_name, name_out) bind(c, name="kiln_register_kernel") result(s)
      import :: c_ptr, c_int, c_char
      type(c_ptr), value :: rt, name_out
      character(kind=c_char), intent(in) :: text(*), file_name(*)
      integer(c_int) :: s
    end function
    function c_register_kernel_file(rt, path, name_out) bind(c, name="kiln_register_kernel_file") result(s)
      import :: c_ptr, c_int, c_char
      type(c_ptr), value :: rt, name_out
      character(kind=c_char), intent(in) :: path(*)
      integer(c_int) :: s
    end function
    function c_spec_create(out) bind(c, name="kiln_spec_create") result(s)
      import :: c_ptr, c_int
      type(c_ptr), intent(out) :: out
      integer(c_int) :: s
    end function
    subroutine c_spec_destroy(spec) bind(c, name="kiln_spec_destroy")
      import :: c_ptr
      type(c_ptr), value :: spec
    end subroutine
    function c_spec_set_int(spec, name, value) bind(c, name="kiln_spec_set_int") result(s)
      import :: c_ptr, c_int, c_char, c_int64_t
      type(c_ptr), value :: spec
      character(kind=c_char), intent(in) :: name(*)
      integer(c_int64_t), value :: value
      integer(c_int) :: s
    end function
    function c_spec_set_double(spec, name, value) bind(c, name="kiln_spec_set_double") result(s)
      import :: c_ptr, c_int, c_char, c_double
      type(c_ptr), value :: spec
      character(kind=c_char), intent(in) :: name(*)
      real(c_double), value :: value
      integer(c_int) :: s
    end function
    function c_spec_set_bool(spec, name, value) bind(c, name="kiln_spec_set_bool") result(s)
      import :: c_ptr, c_int, c_char
      type(c_ptr), value :: spec
      character(kind=c_char), intent(in) :: name(*)
      integer(c_int), value :: value
      integer(c_int) :: s
    end function
    function c_spec_set_run_time(spec, name) bind(c, name="kiln_spec_set_run_time") result(s)
      import :: c_ptr, c_int, c_char
      type(c_ptr), value :: spec
      character(kind=c_char), intent(in) :: name(*)
      integer(c_int) :: s
    end function
    function c_spec_set_strides(spec, array, strides, rank) bind(c, name="kiln_spec_set_strides") result(s)
      import :: c_ptr, c_int, c_char, c_int64_t
      type(c_ptr), value :: spec
      character(kind=c_char), intent(in) :: array(*)
      integer(c_int64_t), intent(in) :: strides(*)
      integer(c_int), value :: rank
      integer(c_int) :: s
    end function
    function c_spec_set_blocked(spec, array, nproma) bind(c, name="kiln_spec_set_blocked") result(s)
      import :: c_ptr, c_int, c_char, c_int64_t
      type(c_ptr), value :: spec
      character(kind=c_char), intent(in) :: array(*)
      integer(c_int64_t), value :: nproma
      integer(c_int) :: s
    end function
    function c_spec_set_blocked_like(spec, array, view) bind(c, name="kiln_spec_set_blocked_like") result(s)
      import :: c_ptr, c_int, c_char, kiln_arg
      type(c_ptr), value :: spec
      character(kind=c_char), intent(in) :: array(*)
      type(kiln_arg), intent(in) :: view
      integer(c_int) :: s
    end function
    function c_flat_table(idx, blk, table) bind(c, name="kiln_flat_table") result(s)
      import :: c_int, kiln_arg
      type(kiln_arg), intent(in) :: idx, blk, table
      integer(c_int) :: s
    end function
    function c_kernel_get(rt, name, spec, mode, out) bind(c, name="kiln_kernel_get") result(s)
      import :: c_ptr, c_int, c_char
      type(c_ptr), value :: rt, spec
      character(kind=c_char), intent(in) :: name(*)
      integer(c_int), value :: mode
      type(c_ptr), intent(out) :: out
      integer(c_int) :: s
    end function
    function c_call(kernel, args, count) bind(c, name="kiln_call") result(s)
      import :: c_ptr, c_int, c_size_t, kiln_arg
      type(c_ptr), value :: kernel
      type(kiln_arg), intent(in) :: args(*)
      integer(c_size_t), value :: count
      integer(c_int) :: s
    end function
    function c_fortran_view(array, out, why, why_size) bind(c, name="kiln_fortran_view") result(s)
      import :: c_int, c_char, kiln_arg
      type(*), dimension(..), intent(in) :: array
      type(kiln_arg), intent(out) :: out
      character(kind=c_char), intent(out) :: why(*)
      integer(c_int), value :: why_size
      integer(c_int) :: s
    end function
    function c_scalar_f64(v) bind(c, name="kiln_scalar_f64") result(a)
      import :: c_double, kiln_arg
      real(c_double), value :: v
      type(kiln_arg) :: a
    end function
    function c_scalar_f32(v) bind(c, name="kiln_scalar_f32") result(a)
      import :: c_float, kiln_arg
      real(c_float), value :: v
      type(kiln_arg) :: a
    end function
    function c_scalar_i32(v) bind(c, name="kiln_scalar_i32") result(a)
      import :: c_int32_t, kiln_arg
      integer(c_int32_t), value :: v
      type(kiln_arg) :: a
    end function
    function c_scalar_i64(v) bind(c, name="kiln_scalar_i64") result(a)
      import :: c_int64_t, kiln_arg
      integer(c_int64_t), value :: v
      type(kiln_arg) :: a
    end function
    function c_scalar_bool(v) bind(c, name="kiln_scalar_bool") result(a)
      import :: c_int, kiln_arg
      integer(c_int), value :: v
      type(kiln_arg) :: a
    end function
  end interface

contains

  ! This thread's message about its last failed call.
  function kiln_last_error() result(message)
    character(:), allocatable :: message
    type(c_ptr) :: p
    character(kind=c_char), pointer :: chars(:)
    integer :: i, n
    p = c_last_error()
    n = int(c_strlen(p))
    call c_f_pointer(p, chars, [n])
    allocate(character(n) :: message)
    do i = 1, n
      message(i:i) = chars(i)
    end do
  end function

  ! Fortran's convention for intrinsics: stat and errmsg when present, else
  ! the message and error stop.
  ! `message`, when given, is the failure's (found in Fortran); else kiln_last_error().
  subroutine kiln_report(status, stat, errmsg, message)
    integer(c_int), intent(in) :: status
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    character(*), intent(in), optional :: message
    character(:), allocatable :: text
    if (present(stat)) stat = int(status)
    if (status == KILN_OK) return
    if (present(message)) then
      text = message
    else
      text = kiln_last_error()
    end if
    if (present(errmsg)) errmsg = text
    if (.not. present(stat)) then
      write (error_unit, '(a)') text
      error stop 1
    end if
  end subroutine

  function c_string(text) result(out)
    character(*), intent(in) :: text
    character(len(text) + 1, kind=c_char) :: out
    out = text // c_null_char
  end function

  ! A runtime configured from the KILN_* variables, and then, where given,
  ! check mode, the threads a call runs on (0 to 1024) and the CPU kernels
  ! are compiled for ('native', an x86-64 level such as 'x86-64-v3', or a CPU
  ! LLVM knows), tiered start (docs/manual/tiered-start.md) and how a
  ! neighbour read through a table is vectorised ('auto', 'on': gathers,
  ! 'off': a scalar load per lane; the same bits either way), as KILN_CHECK,
  ! KILN_THREADS, KILN_TARGET_CPU, KILN_TIERED and KILN_GATHER set them:
  !   call kiln_init(rt, check=.true., threads=4, target_cpu='x86-64-v3', tiered=.true., gather='off')
  ! A value the variable would refuse is refused (stat, errmsg) and no runtime made.
  subroutine init_runtime(rt, stat, errmsg, check, threads, target_cpu, tiered, gather)
    type(kiln_runtime), intent(out) :: rt
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    logical, intent(in), optional :: check
    integer, intent(in), optional :: threads
    character(*), intent(in), optional :: target_cpu
    logical, intent(in), optional :: tiered
    character(*), intent(in), optional :: gather
    type(c_ptr) :: config
    integer(c_int) :: status
    if (.not. (present(check) .or. present(threads) .or. present(target_cpu) .or. present(tiered) .or. &
               present(gather))) then
      call kiln_report(c_runtime_create(rt%handle), stat, errmsg)
      return
    end if
    config = c_null_ptr
    status = c_config_from_env(config)
    if (status == KILN_OK .and. present(check)) status = c_config_set_check(config, merge(1_c_int, 0_c_int, check))
    if (status == KILN_OK .and. present(threads)) status = c_config_set_threads(config, int(threads, c_int))
    if (status == KILN_OK .and. present(target_cpu)) status = c_config_set_target_cpu(config, c_string(target_cpu))
    if (status == KILN_OK .and. present(tiered)) status = c_config_set_tiered(config, merge(1_c_int, 0_c_int, tiered))
    if (status == KILN_OK .and. present(gather)) status = c_config_set_gather(config, c_string(gather))
    if (status == KILN_OK) status = c_runtime_create_from_config(config, rt%handle)
    call c_config_destroy(config)  ! NULL when kiln_config_from_env failed: nothing
    call kiln_report(status, stat, errmsg)
  end subroutine

  ! Tiered start: returns when every specialised build queued so far has
  ! replaced its generic build, or failed. For tests and benchmarks: calls never need it.
  subroutine kiln_wait_for_specialised(rt, stat, errmsg)
    type(kiln_runtime), intent(in) :: rt
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    call kiln_report(c_wait_for_specialised(rt%handle), stat, errmsg)
  end subroutine

  subroutine finalize_runtime(rt)
    type(kiln_runtime), intent(inout) :: rt
    call c_runtime_destroy(rt%handle)
    rt%handle = c_null_ptr
  end subroutine

  ! A kernel from text in the kernel format (lines separated by new_line('a')).
  subroutine kiln_register(rt, text, file_name, stat, errmsg)
    type(kiln_runtime), intent(in) :: rt
    character(*), intent(in) :: text, file_name
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    call kiln_report(c_register_kernel(rt%handle, c_string(text), c_string(file_name), c_null_ptr), stat, errmsg)
  end subroutine

  subroutine kiln_register_file(rt, path, stat, errmsg)
    type(kiln_runtime), intent(in) :: rt
    character(*), intent(in) :: path
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    call kiln_report(c_register_kernel_file(rt%handle, c_string(path), c_null_ptr), stat, errmsg)
  end subroutine

  subroutine init_spec(spec, stat, errmsg)
    type(kiln_spec), intent(out) :: spec
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    call kiln_report(c_spec_create(spec%handle), stat, errmsg)
  end subroutine

  subroutine finalize_spec(spec)
    type(kiln_spec), intent(inout) :: spec
    call c_spec_destroy(spec%handle)
    spec%handle = c_null_ptr
  end subroutine

  subroutine set_i32(spec, name, value, stat, errmsg)
    type(kiln_spec), intent(in) :: spec
    character(*), intent(in) :: name
    integer(c_int32_t), intent(in) :: value
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    call kiln_report(c_spec_set_int(spec%handle, c_string(name), int(value, c_int64_t)), stat, errmsg)
  end subroutine

  subroutine set_i64(spec, name, value, stat, errmsg)
    type(kiln_spec), intent(in) :: spec
    character(*), intent(in) :: name
    integer(c_int64_t), intent(in) :: value
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    call kiln_report(c_spec_set_int(spec%handle, c_string(name), value), stat, errmsg)
  end subroutine

  subroutine set_f64(spec, name, value, stat, errmsg)
    type(kiln_spec), intent(in) :: spec
    character(*), intent(in) :: name
    real(c_double), intent(in) :: value
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    call kiln_report(c_spec_set_double(spec%handle, c_string(name), value), stat, errmsg)
  end subroutine

  subroutine set_logical(spec, name, value, stat, errmsg)
    type(kiln_spec), intent(in) :: spec
    character(*), intent(in) :: name
    logical, intent(in) :: value
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    call kiln_report(c_spec_set_bool(spec%handle, c_string(name), merge(1_c_int, 0_c_int, value)), stat, errmsg)
  end subroutine

  ! Parameter `name`, already set, is read at run time instead of compiled in:
  ! one binary serves all its values (ICON: the horizontal bounds, so every
  ! rank shares the binary).
  subroutine kiln_set_run_time(spec, name, stat, errmsg)
    type(kiln_spec), intent(in) :: spec
    character(*), intent(in) :: name
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    call kiln_report(c_spec_set_run_time(spec%handle, c_string(name)), stat, errmsg)
  end subroutine

  ! Specialises array argument `name` on the strides `array` has.
  subroutine kiln_set_strides_of(spec, name, array, stat, errmsg)
    type(kiln_spec), intent(in) :: spec
    character(*), intent(in) :: name
    type(*), dimension(..), target, intent(in) :: array
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    type(kiln_arg) :: view
    call kiln_view(view, array, stat, errmsg)  ! without stat, a failure stops here
    if (present(stat)) then
      if (stat /= KILN_OK) return
    end if
    call kiln_report(c_spec_set_strides(spec%handle, c_string(name), view%strides, view%rank), stat, errmsg)
  end subroutine

  ! ICON's blocked layout: array argument `name`, declared over (horizontal,
  ! ...) in the kernel, is passed with one dimension more, (nproma, ...,
  ! nblks), as ICON's fields are: flat horizontal index c (0-based) lies at
  ! jc = mod(c, nproma) + 1 of block jb = c / nproma + 1.
  subroutine kiln_set_blocked(spec, name, nproma, stat, errmsg)
    type(kiln_spec), intent(in) :: spec
    character(*), intent(in) :: name
    integer, intent(in) :: nproma
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    call kiln_report(c_spec_set_blocked(spec%handle, c_string(name), int(nproma, c_int64_t)), stat, errmsg)
  end subroutine

  ! The same for a blocked `array` as it will be passed: nproma (its first
  ! extent), its strides and its block count (its last extent) are all
  ! specialised. One block (nproma = n_cells) then reads neighbours as a flat
  ! array does, with no division.
  subroutine kiln_set_blocked_like(spec, name, array, stat, errmsg)
    type(kiln_spec), intent(in) :: spec
    character(*), intent(in) :: name
    type(*), dimension(..), target, intent(in) :: array
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    type(kiln_arg) :: view
    call kiln_view(view, array, stat, errmsg)
    if (present(stat)) then
      if (stat /= KILN_OK) return
    end if
    call kiln_report(c_spec_set_blocked_like(spec%handle, c_string(name), view), stat, errmsg)
  end subroutine

  ! ICON's neighbour arrays idx(nproma, nblks, n) and blk(nproma, nblks, n)
  ! (1-based; both 0 where a neighbour is missing) into kiln's flat 0-based
  ! table(n_entities, n) (-1 where missing), all integer(c_int32_t). Once,
  ! when the grid is read: kernels then take `table` for E2C2V and friends.
  ! On an error (a broken table), table is left as it was.
  subroutine kiln_flat_table(idx, blk, table, stat, errmsg)
    integer(c_int32_t), target, intent(in) :: idx(:, :, :), blk(:, :, :)
    integer(c_int32_t), target, intent(inout) :: table(:, :)
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    type(kiln_arg) :: idx_view, blk_view, table_view
    call kiln_view(idx_view, idx)
    call kiln_view(blk_view, blk)
    call kiln_view(table_view, table)
    call kiln_report(c_flat_table(idx_view, blk_view, table_view), stat, errmsg)
  end subroutine

  ! The kernel `name` specialised on `spec` (generic: the values passed at run time).
  subroutine kiln_get(rt, name, spec, kernel, generic, stat, errmsg)
    type(kiln_runtime), intent(in) :: rt
    character(*), intent(in) :: name
    type(kiln_spec), intent(in) :: spec
    type(kiln_kernel), intent(out) :: kernel
    logical, intent(in), optional :: generic
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    integer(c_int) :: mode
    mode = 0
    if (present(generic)) then
      if (generic) mode = 1
    end if
    call kiln_report(c_kernel_get(rt%handle, c_string(name), spec%handle, mode, kernel%handle), stat, errmsg)
  end subroutine

  ! Runs the kernel: `args` in declaration order (kiln_array, kiln_scalar).
  subroutine kiln_call(kernel, args, stat, errmsg)
    type(kiln_kernel), intent(in) :: kernel
    type(kiln_arg), contiguous, intent(in) :: args(:)  ! passed to C as it lies, never packed
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    call kiln_report(c_call(kernel%handle, args, size(args, kind=c_size_t)), stat, errmsg)
  end subroutine

  ! The view of an array or section of rank 1 to 4 (real(c_double),
  ! real(c_float), integer(c_int32_t), integer(c_int64_t), logical(c_bool);
  ! a default logical is 4 bytes, no kiln type).
  subroutine kiln_view(view, array, stat, errmsg)
    type(kiln_arg), intent(out) :: view
    type(*), dimension(..), target, intent(in) :: array
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    character(kind=c_char) :: why(256)
    character(256) :: message
    integer :: i
    if (c_fortran_view(array, view, why, 256_c_int) == 0) then
      if (present(stat)) stat = KILN_OK
      return
    end if
    message = ''
    do i = 1, 256
      if (why(i) == c_null_char) exit
      message(i:i) = why(i)
    end do
    call kiln_report(int(KILN_ERROR_INVALID_ARGUMENT, c_int), stat, errmsg, &
                     'kiln: cannot view the array: ' // trim(message))
  end subroutine

  ! kiln_view as a function, for argument lists: an array it cannot view ends the program.
  function kiln_array(array) result(view)
    type(*), dimension(..), target, intent(in) :: array
    type(kiln_arg) :: view
    call kiln_view(view, array)
  end function

  function scalar_f64(value) result(arg)
    real(c_double), intent(in) :: value
    type(kiln_arg) :: arg
    arg = c_scalar_f64(value)
  end function
  function scalar_f32(value) result(arg)
    real(c_float), intent(in) :: value
    type(kiln_arg) :: arg
    arg = c_scalar_f32(value)
  end function
  function scalar_i32(value) result(arg)
    integer(c_int32_t), intent(in) :: value
    type(kiln_arg) :: arg
    arg = c_scalar_i32(value)
  end function
  function scalar_i64(value) result(arg)
    integer(c_int64_t), intent(in) :: value
    type(kiln_arg) :: arg
    arg = c_scalar_i64(value)
  end function
  function scalar_logical(value) result(arg)
    logical, intent(in) :: value
    type(kiln_arg) :: arg
    arg = c_scalar_bool(merge(1_c_int, 0_c_int, value))
  end function

end module kiln
