! getpid and setenv from C, for the Fortran tests: each test picks a cache
! folder of its own (by process id) and sets kiln's KILN_* variables before
! kiln reads them. Fortran 2018 has neither call.
module posix_calls
  use, intrinsic :: iso_c_binding
  implicit none
  private
  public :: getpid_, setenv_

contains

  integer function getpid_()
    interface
      integer(c_int) function c_getpid() bind(c, name='getpid')
        import :: c_int
      end function
    end interface
    getpid_ = int(c_getpid())
  end function

  subroutine setenv_(name, value)
    character(*), intent(in) :: name, value
    interface
      integer(c_int) function c_setenv(n, v, o) bind(c, name='setenv')
        import :: c_int, c_char
        character(kind=c_char), intent(in) :: n(*), v(*)
        integer(c_int), value :: o
      end function
    end interface
    if (c_setenv(name // c_null_char, value // c_null_char, 1_c_int) /= 0) error stop 'setenv'
  end subroutine

end module posix_calls
