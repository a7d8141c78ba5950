! kiln from Fortran over MPI: module kiln_mpi, collective resolution
! (kiln/kiln_mpi.h). The communicator is the Fortran handle: MPI_COMM_WORLD
! of `use mpi`, or comm%MPI_VAL of `use mpi_f08`.
module kiln_mpi
  use, intrinsic :: iso_c_binding
  use kiln, only: kiln_runtime, kiln_spec, kiln_kernel, kiln_report
  implicit none
  private
  public :: kiln_get_collective

  type, bind(c) :: c_request
    type(c_ptr) :: name
    type(c_ptr) :: spec
    integer(c_int) :: mode
  end type

  ! A name kept with its NUL while the call runs.
  type :: c_name
    character(kind=c_char), allocatable :: chars(:)
  end type

  interface
    function c_kernels_get_collective(rt, requests, count, comm, out) &
        bind(c, name="kiln_kernels_get_collective") result(s)
      import :: c_ptr, c_size_t, c_int, c_request
      type(c_ptr), value :: rt
      type(c_request), intent(in) :: requests(*)
      integer(c_size_t), value :: count
      integer(c_int), value :: comm
      type(c_ptr), intent(out) :: out(*)
      integer(c_int) :: s
    end function
  end interface

contains

  ! kernels(i) is names(i) specialised on specs(i), resolved by every rank of
  ! `comm` together: every rank passes the same names and specs in the same
  ! order. A kernel that does not compile fails on every rank alike.
  subroutine kiln_get_collective(rt, names, specs, kernels, comm, generic, stat, errmsg)
    type(kiln_runtime), intent(in) :: rt
    character(*), intent(in) :: names(:)
    type(kiln_spec), intent(in) :: specs(:)
    type(kiln_kernel), intent(out) :: kernels(:)
    integer, intent(in) :: comm
    logical, intent(in), optional :: generic
    integer, intent(out), optional :: stat
    character(*), intent(inout), optional :: errmsg
    type(c_name), allocatable, target :: kept(:)
    type(c_request), allocatable :: requests(:)
    type(c_ptr), allocatable :: out(:)
    integer :: i, n, j
    n = size(names)
    if (size(specs) /= n .or. size(kernels) /= n) then
      call kiln_report(2_c_int, stat, errmsg, 'kiln_get_collective: names, specs and kernels differ in size')
      return
    end if
    allocate(kept(n), requests(n), out(n))
    do i = 1, n
      allocate(kept(i)%chars(len_trim(names(i)) + 1))
      do j = 1, len_trim(names(i))
        kept(i)%chars(j) = names(i)(j:j)
      end do
      kept(i)%chars(len_trim(names(i)) + 1) = c_null_char
      requests(i)%name = c_loc(kept(i)%chars)
      requests(i)%spec = specs(i)%handle
      requests(i)%mode = 0
      if (present(generic)) then
        if (generic) requests(i)%mode = 1
      end if
    end do
    call kiln_report(c_kernels_get_collective(rt%handle, requests, int(n, c_size_t), int(comm, c_int), out), &
                     stat, errmsg)
    do i = 1, n
      kernels(i)%handle = out(i)
    end do
  end subroutine

end module kiln_mpi
