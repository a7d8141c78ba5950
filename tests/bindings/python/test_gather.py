"""The gather setting (Config::gather, KILN_GATHER): a Runtime setting refused by name when it
is not auto, on or off; on and off are cached apart (another key) and give the same bits on a
kernel that reads neighbours through a table (ICON's layout: cells contiguous)."""

import numpy as np
import pytest

import kiln
from layouts import arguments_in_layout, arrays_of
from references import temporary_fields_for_turbulence_diagnostics

KERNEL = "temporary_fields_for_turbulence_diagnostics"


def test_a_bad_gather_is_refused_naming_the_setting_and_the_choices(tmp_path):
    for bad in ("yes", "ON", " on", ""):
        with pytest.raises(kiln.Error, match=rf"Config::gather '{bad}': expected auto, on or off"):
            kiln.Runtime(cache_dir=tmp_path, log_level="off", gather=bad)
    with pytest.raises(kiln.Error, match=r"setting 'gather'"):
        kiln.Runtime(cache_dir=tmp_path, log_level="off", gather=1)


def run_with(gather, cache_dir):
    """The outputs of one call in Fortran order, the entry's key and its recorded gather."""
    runtime = kiln.Runtime(cache_dir=cache_dir, log_level="off", gather=gather)
    assert runtime.config["gather"] == gather
    spec, inputs, expected = temporary_fields_for_turbulence_diagnostics(np.random.default_rng(7))
    arguments = arguments_in_layout(inputs, "F")
    key = runtime.precompile(KERNEL, spec, strides_of=arrays_of(arguments))
    runtime.kernel(KERNEL, spec, strides_of=arrays_of(arguments))(*arguments.values())
    for output, want in expected.items():
        np.testing.assert_allclose(arguments[output], want, rtol=1e-12, atol=1e-12, err_msg=f"{output} ({gather})")
    recipe = kiln.Cache(cache_dir=cache_dir, read_only=True, log_level="off").read(key).recipe
    return {name: arguments[name].copy() for name in expected}, key, recipe.gather


def test_on_and_off_are_cached_apart_and_give_the_same_bits(tmp_path):
    off, off_key, off_recorded = run_with("off", tmp_path)
    on, on_key, on_recorded = run_with("on", tmp_path)
    _, auto_key, auto_recorded = run_with("auto", tmp_path)
    assert len({off_key, on_key, auto_key}) == 3
    assert (off_recorded, on_recorded, auto_recorded) == ("off", "on", "auto")
    for name in off:
        assert off[name].tobytes() == on[name].tobytes(), name
