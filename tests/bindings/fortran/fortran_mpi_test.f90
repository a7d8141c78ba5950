! Collective resolution from Fortran on 4 MPI ranks (module kiln_mpi): every
! rank gets kernels that run, and a kernel that does not compile fails with
! KILN_ERROR_COMPILE on every rank, through stat and errmsg, nobody hanging.
program fortran_mpi_test
  use, intrinsic :: iso_c_binding
  use mpi
  use kiln
  use kiln_mpi
  implicit none
  character(len=*), parameter :: nl = new_line('a')
  character(len=*), parameter :: scale = &
    '#pragma kiln kernel f_mpi_scale' // nl // '#pragma kiln array double y[1]' // nl // &
    '#pragma kiln domain n' // nl // '#pragma kiln static double factor' // nl // &
    'kiln::for_each_column(0, n, [&](kiln::index_t c) { y(c) *= factor; });' // nl
  character(len=*), parameter :: broken = &
    '#pragma kiln kernel f_mpi_broken' // nl // '#pragma kiln array double y[1]' // nl // &
    '#pragma kiln domain n' // nl // '#pragma kiln static double factor' // nl // &
    'kiln::for_each_column(0, n, [&](kiln::index_t c) { y(c) = missing * factor; });' // nl
  type(kiln_runtime) :: rt
  type(kiln_spec) :: specs(2)
  type(kiln_kernel) :: kernels(2)
  real(c_double), target :: y(4)
  integer :: ierr, rank, stat, failures, total, i
  character(len=1024) :: errmsg
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  failures = 0
  call kiln_init(rt)
  call kiln_register(rt, scale, 'scale.kiln')
  call kiln_register(rt, broken, 'broken.kiln')
  do i = 1, 2
    call kiln_init(specs(i))
    call kiln_set(specs(i), 'n', 4)
    call kiln_set(specs(i), 'factor', real(i + 1, c_double))
  end do
  call kiln_get_collective(rt, ['f_mpi_scale ', 'f_mpi_scale '], specs, kernels, MPI_COMM_WORLD)
  y = [1, 2, 3, 4]
  call kiln_call(kernels(1), [kiln_array(y)])
  call kiln_call(kernels(2), [kiln_array(y)])
  if (any(y /= [6, 12, 18, 24])) failures = failures + 1

  errmsg = ''
  call kiln_get_collective(rt, ['f_mpi_scale ', 'f_mpi_broken'], specs, kernels, MPI_COMM_WORLD, &
                           stat=stat, errmsg=errmsg)
  if (stat /= KILN_ERROR_COMPILE .or. index(errmsg, 'broken.kiln:5:') == 0) then
    failures = failures + 1
    print '(a,i0,2a)', 'rank ', rank, ': expected a compile error: ', trim(errmsg)
  end if
  call kiln_finalize(specs(1))
  call kiln_finalize(specs(2))
  call kiln_finalize(rt)
  call MPI_Allreduce(failures, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0 .and. total == 0) print '(a)', 'fortran_mpi_test: every rank passed'
  call MPI_Finalize(ierr)
  if (total /= 0) error stop 1
end program fortran_mpi_test
