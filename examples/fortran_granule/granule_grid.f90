! The granule's test grid from Fortran (grid_export.cpp binds the C++
! fixture granule/grid.hpp): sizes, the zone indices the C++ granule
! gives each kernel (Granule::add_stages), and the connectivity in the two
! forms the Fortran granule uses: ICON's 1-based index and block arrays, and
! kiln's flat 0-based tables.
module granule_grid
  use, intrinsic :: iso_c_binding
  implicit none
  private

  integer, parameter, public :: CELLS = 0, EDGES = 1, VERTICES = 2  ! entity kinds, as grid_export.cpp numbers them

  type, public :: grid_t
    type(c_ptr) :: handle = c_null_ptr
    logical :: limited_area = .false.
    integer :: n(0:2) = 0  ! entities of each kind
  end type

  ! The zone indices of the stages (0-based, as kiln's domains).
  type, public :: zones_t
    integer :: cells_from_row2 = 0     ! stages 1 and 4
    integer :: vertices_from_row2 = 0  ! stage 2
    integer :: edges_from_row5 = 0     ! stage 3
    integer :: start_2nd_nudge_line_e = 0
    integer :: interior_c = 0
  end type

  public :: grid_create, grid_destroy, grid_zones, icon_neighbours, flat_table

  interface
    function c_grid_create(limited_area, nx, ny, why, why_size) bind(c, name="granule_grid_create") result(g)
      import :: c_ptr, c_int, c_int64_t, c_char
      integer(c_int), value :: limited_area, why_size
      integer(c_int64_t), value :: nx, ny
      character(kind=c_char), intent(out) :: why(*)
      type(c_ptr) :: g
    end function
    subroutine c_grid_destroy(g) bind(c, name="granule_grid_destroy")
      import :: c_ptr
      type(c_ptr), value :: g
    end subroutine
    function c_grid_is_limited_area(g) bind(c, name="granule_grid_is_limited_area") result(r)
      import :: c_ptr, c_int
      type(c_ptr), value :: g
      integer(c_int) :: r
    end function
    function c_grid_size(g, entity) bind(c, name="granule_grid_size") result(n)
      import :: c_ptr, c_int, c_int64_t
      type(c_ptr), value :: g
      integer(c_int), value :: entity
      integer(c_int64_t) :: n
    end function
    function c_grid_table(g, name, data) bind(c, name="granule_grid_table") result(cols)
      import :: c_ptr, c_char, c_int64_t
      type(c_ptr), value :: g
      character(kind=c_char), intent(in) :: name(*)
      type(c_ptr), intent(out) :: data
      integer(c_int64_t) :: cols
    end function
    function c_from_boundary_row(g, entity, row) bind(c, name="granule_grid_from_boundary_row") result(i)
      import :: c_ptr, c_int, c_int64_t
      type(c_ptr), value :: g
      integer(c_int), value :: entity, row
      integer(c_int64_t) :: i
    end function
    function c_start_2nd_nudge_line(g, entity) bind(c, name="granule_grid_start_2nd_nudge_line") result(i)
      import :: c_ptr, c_int, c_int64_t
      type(c_ptr), value :: g
      integer(c_int), value :: entity
      integer(c_int64_t) :: i
    end function
    function c_interior_start(g, entity) bind(c, name="granule_grid_interior_start") result(i)
      import :: c_ptr, c_int, c_int64_t
      type(c_ptr), value :: g
      integer(c_int), value :: entity
      integer(c_int64_t) :: i
    end function
  end interface

contains

  ! A torus or limited-area grid of nx x ny rhombi; a grid the fixture
  ! refuses (too small) ends the program with its reason.
  subroutine grid_create(grid, limited_area, nx, ny)
    type(grid_t), intent(out) :: grid
    logical, intent(in) :: limited_area
    integer, intent(in) :: nx, ny
    character(kind=c_char) :: why(512)
    character(512) :: message
    integer :: i, kind
    grid%handle = c_grid_create(merge(1_c_int, 0_c_int, limited_area), int(nx, c_int64_t), int(ny, c_int64_t), &
                                why, 512_c_int)
    if (.not. c_associated(grid%handle)) then
      message = ''
      do i = 1, 512
        if (why(i) == c_null_char) exit
        message(i:i) = why(i)
      end do
      error stop 'granule grid: ' // trim(message)
    end if
    grid%limited_area = c_grid_is_limited_area(grid%handle) /= 0
    do kind = CELLS, VERTICES
      grid%n(kind) = int(c_grid_size(grid%handle, int(kind, c_int)))
    end do
  end subroutine

  subroutine grid_destroy(grid)
    type(grid_t), intent(inout) :: grid
    call c_grid_destroy(grid%handle)
    grid%handle = c_null_ptr
  end subroutine

  function grid_zones(grid) result(z)
    type(grid_t), intent(in) :: grid
    type(zones_t) :: z
    z%cells_from_row2 = int(c_from_boundary_row(grid%handle, int(CELLS, c_int), 2_c_int))
    z%vertices_from_row2 = int(c_from_boundary_row(grid%handle, int(VERTICES, c_int), 2_c_int))
    z%edges_from_row5 = int(c_from_boundary_row(grid%handle, int(EDGES, c_int), 5_c_int))
    z%start_2nd_nudge_line_e = int(c_start_2nd_nudge_line(grid%handle, int(EDGES, c_int)))
    z%interior_c = int(c_interior_start(grid%handle, int(CELLS, c_int)))
  end function

  ! Table `name` as the fixture holds it: (cols, n_entities) in Fortran's
  ! order is its row-major [n][cols]. The table's source entity kind is the
  ! caller's to know (its first letter).
  function raw_table(grid, name, n) result(t)
    type(grid_t), intent(in) :: grid
    character(*), intent(in) :: name
    integer, intent(in) :: n
    integer(c_int32_t), pointer :: t(:, :)
    type(c_ptr) :: data
    integer(c_int64_t) :: cols
    cols = c_grid_table(grid%handle, name // c_null_char, data)
    if (cols == 0) error stop 'granule grid: no table ' // name
    call c_f_pointer(data, t, [int(cols), n])
  end function

  ! ICON's connectivity for table `name` of n entities in blocks of nproma:
  ! neighbour j of entity (jc, jb) is (idx(jc, jb, j), blk(jc, jb, j)), 1-based;
  ! a missing one (the fixture's -1) is idx = blk = 0, as are the slots past
  ! the last entity of the last block.
  subroutine icon_neighbours(grid, name, n, nproma, idx, blk)
    type(grid_t), intent(in) :: grid
    character(*), intent(in) :: name
    integer, intent(in) :: n, nproma
    integer, allocatable, intent(out) :: idx(:, :, :), blk(:, :, :)
    integer(c_int32_t), pointer :: t(:, :)
    integer :: e, j, nb
    t => raw_table(grid, name, n)
    nb = (n + nproma - 1) / nproma
    allocate(idx(nproma, nb, size(t, 1)), blk(nproma, nb, size(t, 1)))
    idx = 0
    blk = 0
    do j = 1, size(t, 1)
      do e = 0, n - 1
        if (t(j, e + 1) >= 0) then
          idx(mod(e, nproma) + 1, e / nproma + 1, j) = mod(int(t(j, e + 1)), nproma) + 1
          blk(mod(e, nproma) + 1, e / nproma + 1, j) = int(t(j, e + 1)) / nproma + 1
        end if
      end do
    end do
  end subroutine

  ! kiln's form of table `name`: table(e, j) is neighbour j of entity e,
  ! 0-based, -1 where missing (the fixture's values, transposed).
  subroutine flat_table(grid, name, n, table)
    type(grid_t), intent(in) :: grid
    character(*), intent(in) :: name
    integer, intent(in) :: n
    integer(c_int32_t), allocatable, intent(out) :: table(:, :)
    integer(c_int32_t), pointer :: t(:, :)
    t => raw_table(grid, name, n)
    table = transpose(t)
  end subroutine

end module granule_grid
