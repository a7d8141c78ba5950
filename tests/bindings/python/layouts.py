"""The same values in the three layouts every kernel is tested in: C order, Fortran order,
and a strided view (every other element of a larger array, offset: no dimension contiguous)."""

import numpy as np

LAYOUTS = ("C", "F", "strided")


def in_layout(values, layout):
    """A new array of `values` laid out as `layout` asks."""
    if layout == "C":
        return np.ascontiguousarray(values).copy()
    if layout == "F":
        return np.asfortranarray(values).copy()
    if layout == "strided":
        big = np.full(tuple(2 * n + 1 for n in values.shape), -7, dtype=values.dtype)
        view = big[tuple(slice(1, None, 2) for _ in values.shape)]
        view[...] = values
        assert not view.flags.c_contiguous and not view.flags.f_contiguous
        return view
    raise ValueError(layout)


def arguments_in_layout(inputs, layout):
    """{name: value} with every array in `layout` and scalars as they are."""
    return {name: in_layout(v, layout) if isinstance(v, np.ndarray) else v for name, v in inputs.items()}


def arrays_of(arguments):
    return {name: v for name, v in arguments.items() if isinstance(v, np.ndarray)}
