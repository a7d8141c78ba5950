"""ICON's blocked layout from Python (issue 33, item 11): Runtime.kernel(...,
blocked={array: nproma or an example array}) runs a kernel written over (cell,
level) on arrays of (nproma, nlev, nblks), no copy, with the results of the
same cells laid out flat."""

import numpy as np
import pytest

import kiln

NPROMA, LEVELS, BLOCKS = 4, 3, 2
CELLS = NPROMA * BLOCKS
SPEC = dict(horizontal_start=1, horizontal_end=7, vertical_start=0, vertical_end=LEVELS, rd_o_cvd=0.4)
FIELDS = ("theta_v", "exner", "z_temp")


def flat_fields(rng):
    """theta_v, exner, area, z_temp over (cells, levels), Fortran order."""
    return [np.asfortranarray(rng.uniform(250, 300, (CELLS, LEVELS))), np.asfortranarray(rng.uniform(0.5, 1, (CELLS, LEVELS))),
            rng.uniform(0.5, 2, CELLS), np.asfortranarray(rng.uniform(-1, 1, (CELLS, LEVELS)))]


def blocked(field):
    """ICON's blocks of a flat field: cell c = jb * nproma + jc at (jc, ..., jb), Fortran order."""
    if field.ndim == 1:
        return np.asfortranarray(field.reshape(BLOCKS, NPROMA).T)
    return np.asfortranarray(field.reshape(BLOCKS, NPROMA, LEVELS).transpose(1, 2, 0))


@pytest.mark.parametrize("how", ["nproma", "example"])
def test_blocked_arrays_give_the_flat_results(runtime, how):
    flat = flat_fields(np.random.default_rng(21))
    blocks = [blocked(f) for f in flat]
    if how == "nproma":
        layout = {name: NPROMA for name in (*FIELDS, "area")}
    else:
        layout = {"theta_v": blocks[0], "exner": blocks[1], "area": blocks[2], "z_temp": blocks[3]}
    k_flat = runtime.kernel("update_theta_and_exner", SPEC)
    k_blocked = runtime.kernel("update_theta_and_exner", SPEC, blocked=layout)
    k_flat(*flat)
    k_blocked(*blocks)
    for name, f, b in zip(("theta_v", "exner", "area", "z_temp"), flat, blocks):
        np.testing.assert_array_equal(b, blocked(f), err_msg=name)


def test_a_flat_array_given_to_a_blocked_kernel_and_bad_layouts_are_named(runtime):
    flat = flat_fields(np.random.default_rng(22))
    k = runtime.kernel("update_theta_and_exner", SPEC, blocked={name: NPROMA for name in (*FIELDS, "area")})
    with pytest.raises(kiln.ArgumentError, match=r"argument 0 'theta_v'"):
        k(*flat)
    with pytest.raises(kiln.SpecError, match=r"array 'area': blocked: nproma must be 1 or more, got 0"):
        runtime.kernel("update_theta_and_exner", SPEC, blocked={"area": 0})
    with pytest.raises(kiln.SpecError, match=r"blocked: expected a dict"):
        runtime.kernel("update_theta_and_exner", SPEC, blocked=[("area", 4)])
