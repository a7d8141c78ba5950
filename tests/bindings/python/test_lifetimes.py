"""What a handle keeps alive: a Bound its arrays, a Kernel its Runtime; and what a Bound
re-reads at each call, so that an array resized or reshaped under it is never read at its
old place. The suite also runs under PYTHONMALLOC=debug (ctest bindings.python_debug_malloc),
where memory read after it is freed holds a poison pattern and fails these comparisons."""

import gc
import weakref

import numpy as np
import pytest

import kiln

N, LEVELS = 9, 5
SPEC = dict(horizontal_start=0, horizontal_end=N, vertical_start=0, vertical_end=LEVELS, rd_o_cvd=0.4)


def theta_arrays(rng):
    return [rng.uniform(250, 300, (N, LEVELS)), rng.uniform(0.5, 1, (N, LEVELS)), rng.uniform(0.5, 2, N),
            rng.uniform(-1, 1, (N, LEVELS))]


def theta_reference(theta_v, exner, area, z_temp):
    th = theta_v + area[:N, None] * z_temp
    return th, exner * (1 + 0.4 * (th / theta_v - 1))


def test_bound_keeps_deleted_arrays_alive(runtime):
    k = runtime.kernel("update_theta_and_exner", SPEC)
    arrays = theta_arrays(np.random.default_rng(4))
    want_theta, want_exner = theta_reference(*arrays)
    bound = k.bind(*arrays)
    watched = [weakref.ref(a) for a in arrays]
    del arrays
    gc.collect()
    assert all(w() is not None for w in watched)
    np.ones(10_000)  # memory that a freed array's would be reused for
    bound()
    theta_v, exner = bound.arguments[0], bound.arguments[1]
    np.testing.assert_allclose(theta_v, want_theta, rtol=1e-13)
    np.testing.assert_allclose(exner, want_exner, rtol=1e-13)
    del bound, theta_v, exner
    gc.collect()
    assert all(w() is None for w in watched)


def test_bound_rereads_a_resized_array(runtime):
    k = runtime.kernel("update_theta_and_exner", SPEC)
    theta_v, exner, area, z_temp = theta_arrays(np.random.default_rng(5))
    bound = k.bind(theta_v, exner, area, z_temp)
    area.resize(4 * N, refcheck=False)  # reallocated (moved, or grown in place: the allocator's choice)
    with pytest.raises(kiln.ArgumentError, match=r"argument 'area' dimension 0 \(cells\): extent 36"):
        bound()
    # Back to N: the Bound reads the array's pointer and shape again at each call, so it computes
    # with the 2s wherever they now lie. Whether this lands back at the first address is the
    # allocator's (it did once under PYTHONMALLOC=debug, where an assertion that it moved failed):
    # not asserted; in a run where it moved, a Bound that kept the old pointer reads freed memory.
    area.resize(N, refcheck=False)
    area[:] = 2.0
    start = theta_v.copy()
    bound()
    np.testing.assert_allclose(theta_v, start + 2.0 * z_temp, rtol=1e-13)


def test_bound_refuses_an_array_reshaped_in_place(runtime):
    k = runtime.kernel("update_theta_and_exner", SPEC)
    theta_v, exner, area, z_temp = theta_arrays(np.random.default_rng(6))
    bound = k.bind(theta_v, exner, area, z_temp)
    z_temp.shape = (LEVELS, N)  # the same memory seen as levels x cells: no longer the kernel's z_temp
    with pytest.raises(kiln.ArgumentError, match=r"'z_temp'"):
        bound()


def test_handles_keep_their_runtime(cache_dir, tmp_path):
    """A Runtime ends (and writes its metrics file) when its last Kernel or Bound goes, not before."""
    metrics_file = tmp_path / "metrics.json"
    rt = kiln.Runtime(cache_dir=cache_dir, metrics_file=metrics_file, log_level="off")
    watched = weakref.ref(rt)
    k = rt.kernel("update_theta_and_exner", SPEC)
    arrays = theta_arrays(np.random.default_rng(7))
    bound = k.bind(*arrays)
    del rt
    gc.collect()
    assert watched() is not None and not metrics_file.exists()
    k(*arrays)
    del k
    gc.collect()
    bound()  # the Bound holds the Kernel, which holds the Runtime
    assert watched() is not None and not metrics_file.exists()
    del bound
    gc.collect()
    assert watched() is None
    assert "update_theta_and_exner" in metrics_file.read_text()


def test_dlpack_arrays_are_held_and_written_in_place(runtime):
    """Any object with __dlpack__ is an array: read through DLPack, not copied."""

    class Exported:
        def __init__(self, array):
            self.array = array

        def __dlpack__(self, **options):
            return self.array.__dlpack__(**options)

        def __dlpack_device__(self):
            return self.array.__dlpack_device__()

    k = runtime.kernel("update_theta_and_exner", SPEC)
    arrays = theta_arrays(np.random.default_rng(8))
    want_theta, want_exner = theta_reference(*arrays)
    exported = [Exported(a) for a in arrays]
    k(*exported)
    np.testing.assert_allclose(arrays[0], want_theta, rtol=1e-13)
    np.testing.assert_allclose(arrays[1], want_exner, rtol=1e-13)

    fresh = theta_arrays(np.random.default_rng(9))
    want_theta, _ = theta_reference(*fresh)
    bound = k.bind(*[Exported(a) for a in fresh])  # the Bound holds the imported tensors
    theta_view = fresh[0]
    del fresh
    gc.collect()
    bound()
    np.testing.assert_allclose(theta_view, want_theta, rtol=1e-13)


def test_a_cycle_through_a_bound_is_collected(runtime):
    """A Bound tells the cycle collector what it holds: an array that holds its own Bound goes."""

    class Field(np.ndarray):
        pass

    k = runtime.kernel("update_theta_and_exner", SPEC)
    arrays = theta_arrays(np.random.default_rng(12))
    theta_v = arrays[0].view(Field)
    theta_v.step = k.bind(theta_v, *arrays[1:])  # theta_v -> Bound -> its arguments -> theta_v
    theta_v.step()
    watched = weakref.ref(theta_v)
    del theta_v
    gc.collect()
    assert watched() is None


def test_a_runtime_held_only_through_a_bound_cycle_ends_and_writes_its_metrics(tmp_path):
    """Issue 33, item 7: the cycle's Bound holds its Kernel, which holds the Runtime: collected,
    the Runtime ends, and its metrics file is written."""

    class Field(np.ndarray):
        pass

    metrics = tmp_path / "metrics.json"
    rt = kiln.Runtime(cache_dir=str(tmp_path / "cache"), metrics_file=str(metrics))
    k = rt.kernel("update_theta_and_exner", SPEC)
    arrays = theta_arrays(np.random.default_rng(13))
    theta_v = arrays[0].view(Field)
    theta_v.step = k.bind(theta_v, *arrays[1:])
    theta_v.step()
    del rt, k, theta_v
    assert not metrics.exists()
    gc.collect()
    assert metrics.exists()
    assert "update_theta_and_exner" in metrics.read_text()
