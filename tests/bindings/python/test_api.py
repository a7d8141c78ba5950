"""The rest of the API: settings, kernels() and Request, user kernels and every element
type, declarations, metrics, per-parameter run-time values, threads, the GIL, the stubs."""

import ast
import pathlib
import sys
import threading
import time

import numpy as np
import pytest

import kiln

N, LEVELS = 11, 3
SPEC = dict(horizontal_start=0, horizontal_end=N, vertical_start=0, vertical_end=LEVELS, rd_o_cvd=0.4)

# Every element type of kernel arguments: arrays (bool arrays in BOOL_ARRAYS) and scalars.
EVERY_TYPE = """
#pragma kiln kernel py_every_type
#pragma kiln array double y[cells][levels]
#pragma kiln array float x[cells][levels]
#pragma kiln array int32 i32[cells]
#pragma kiln array int64 i64[cells]
#pragma kiln scalar double a
#pragma kiln scalar float b
#pragma kiln scalar int32 c
#pragma kiln scalar int64 d
#pragma kiln scalar bool on
#pragma kiln domain horizontal_start horizontal_end vertical_start vertical_end
#pragma kiln size cells contains horizontal_start horizontal_end
#pragma kiln size levels contains vertical_start vertical_end
kiln::for_each_point(y, horizontal_start, horizontal_end, vertical_start, vertical_end,
                     [&](auto r, kiln::index_t k) {
                       if (on && i32(r) % 3 != 0) y(r, k) = a * y(r, k) + b * x(r, k) + c * i32(r) + d * i64(r);
                     });
"""


def theta_arrays():
    return [np.full((N, LEVELS), 300.0), np.full((N, LEVELS), 0.9), np.linspace(0.5, 1.5, N),
            np.full((N, LEVELS), 0.25)]


def test_settings_reach_the_runtime(tmp_path):
    rt = kiln.Runtime(cache_dir=tmp_path / "c", threads=2, lock_timeout=1.5, build_slots=None,
                      read_only_tiers=[tmp_path / "t"], opt_level="O2", log_level="off")
    config = rt.config
    assert config["cache_dir"] == str(tmp_path / "c")
    assert config["threads"] == 2 and config["lock_timeout"] == 1.5 and config["opt_level"] == "O2"
    assert config["read_only_tiers"] == [str(tmp_path / "t")] and config["build_slots"] is None
    assert not config["time_calls"]
    assert kiln.Runtime(cache_dir=tmp_path, metrics_file=tmp_path / "m.json", log_level="off").config["time_calls"]


def test_kernels_in_the_order_asked(runtime):
    stencil = dict(nx=4, ny=4, nz=4, c0=1.0, cx=0.0, cy=0.0, cz=0.0)
    handles = runtime.kernels([
        kiln.Request("stencil7", stencil),
        ("update_theta_and_exner", SPEC),
        ("update_theta_and_exner", SPEC, "generic"),
        kiln.Request("update_theta_and_exner", mode=kiln.Mode.generic, run_time="horizontal_end", **SPEC),
    ])
    assert [h.name for h in handles] == ["stencil7"] + ["update_theta_and_exner"] * 3
    assert [h.specialised for h in handles] == [True, True, False, False]
    assert handles[1].arguments == ("theta_v", "exner", "area", "z_temp")
    with pytest.raises(kiln.SpecError, match=r"request 1 is neither"):
        runtime.kernels([("stencil7", stencil), "stencil7"])


def test_run_time_parameters_share_one_binary(runtime):
    """ICON's choice (issue 10): bounds at run time, one binary for every value of them."""
    def theta(end, run_time=()):
        return runtime.kernel("update_theta_and_exner", dict(SPEC, horizontal_end=end), run_time=run_time)

    assert theta(5).key != theta(7).key
    shared = ["horizontal_start", "horizontal_end"]
    assert theta(5, shared).key == theta(7, shared).key
    arrays = theta_arrays()
    theta(5, shared)(*arrays)
    assert np.all(arrays[0][:5] == 300.0 + arrays[2][:5, None] * 0.25) and np.all(arrays[0][5:] == 300.0)


def test_every_element_type(runtime):
    name = runtime.register_kernel(EVERY_TYPE, "every_type.kiln")
    assert name == "py_every_type"
    declaration = runtime.declaration(name)
    assert [(a.name, a.type, a.rank) for a in declaration.arguments] == [
        ("y", "double", 2), ("x", "float", 2), ("i32", "int32", 1), ("i64", "int64", 1), ("a", "double", 0), ("b", "float", 0), ("c", "int32", 0), ("d", "int64", 0), ("on", "bool", 0)]
    assert [(p.name, p.domain) for p in declaration.parameters][:2] == [("horizontal_start", True),
                                                                          ("horizontal_end", True)]
    k = runtime.kernel(name, {key: value for key, value in SPEC.items() if key != "rd_o_cvd"})
    rng = np.random.default_rng(10)
    y, x = rng.uniform(-1, 1, (N, LEVELS)), rng.uniform(-1, 1, (N, LEVELS)).astype(np.float32)
    i32, i64 = np.arange(N, dtype=np.int32), np.arange(N, dtype=np.int64) * 2**33 + 1  # beyond int32
    keep = (np.arange(N) % 3 == 0)[:, None]  # rows the kernel leaves
    start = y.copy()
    d = 2**20 + 1
    k(y, x, i32, i64, 0.5, 0.1, np.int32(-3), d, np.bool_(True))
    b = float(np.float32(0.1))  # a float scalar is rounded to float, as C++'s kiln::scalar(float) does
    want = 0.5 * start + b * x.astype(np.float64) - 3 * i32[:, None] + (d * i64)[:, None].astype(np.float64)
    np.testing.assert_allclose(y, np.where(keep, start, want), rtol=1e-12)
    k(y, x, i32, i64, 0.5, 0.1, -3, 1, False)  # `on` false: nothing changes
    np.testing.assert_allclose(y, np.where(keep, start, want), rtol=1e-12)
    with pytest.raises(kiln.ArgumentError, match=r"argument 6 'c': 2147483648 does not fit an int32 scalar"):
        k(y, x, i32, i64, 0.5, 0.1, 2**31, 1, True)
    with pytest.raises(kiln.ArgumentError, match=r"argument 7 'd': expected an int64 scalar, got float"):
        k(y, x, i32, i64, 0.5, 0.1, 1, 1.0, True)
    with pytest.raises(kiln.ArgumentError, match=r"argument 8 'on': expected a bool scalar, got int"):
        k(y, x, i32, i64, 0.5, 0.1, 1, 1, 1)
    assert runtime.register_kernel(EVERY_TYPE) == name  # the same text again: nothing changes (issue 33, item 11)


# A mask read and a mask written: bool arrays are NumPy's bool_, one byte, no copy.
BOOL_ARRAYS = """
#pragma kiln kernel py_bool_arrays
#pragma kiln array double x[cells]
#pragma kiln array bool keep[cells]
#pragma kiln array bool changed[cells]
#pragma kiln size cells
#pragma kiln domain n
kiln::for_each_column(0, n, [&](kiln::index_t c) {
  changed(c) = !keep(c) && x(c) < 0.0;
  if (changed(c)) x(c) = 0.0;
});
"""


def test_bool_arrays(runtime):
    name = runtime.register_kernel(BOOL_ARRAYS, "bool_arrays.kiln")
    assert [(a.name, a.type, a.rank) for a in runtime.declaration(name).arguments] == [
        ("x", "double", 1), ("keep", "bool", 1), ("changed", "bool", 1)]
    k = runtime.kernel(name, dict(n=N))
    x = np.linspace(-1, 1, N)
    keep, changed = np.arange(N) % 2 == 0, np.ones(N, dtype=np.bool_)
    start = x.copy()
    k(x, keep, changed)
    want_changed = ~keep & (start < 0)
    np.testing.assert_array_equal(changed, want_changed)
    np.testing.assert_array_equal(x, np.where(want_changed, 0.0, start))
    assert want_changed.any() and not want_changed.all()
    # Strided, bound, and through DLPack: the same bytes, read where they lie.
    wide = np.zeros((N, 2), dtype=np.bool_)
    x[:] = start
    k.bind(x, keep, wide[:, 1])()
    np.testing.assert_array_equal(wide[:, 1], want_changed)
    assert not wide[:, 0].any()

    class Exported:
        def __init__(self, array):
            self.array = array

        def __dlpack__(self, **options):
            return self.array.__dlpack__(**options)

        def __dlpack_device__(self):
            return self.array.__dlpack_device__()

    x[:] = start
    changed[:] = True
    k(x, Exported(keep), Exported(changed))
    np.testing.assert_array_equal(changed, want_changed)
    # Anything else for a bool argument, and a bool array for a double one, is refused by name and dtype.
    with pytest.raises(kiln.ArgumentError, match=r"argument 1 'keep': dtype int8 is not one kiln takes"):
        k(x, keep.astype(np.int8), changed)
    with pytest.raises(kiln.ArgumentError, match=r"argument 1 'keep': dtype uint8 is not one kiln takes"):
        k(x, keep.view(np.uint8), changed)
    with pytest.raises(kiln.ArgumentError,
                       match=r"argument 2 'changed': expected a bool array of rank 1, got an int32 array of rank 1"):
        k(x, keep, changed.astype(np.int32))
    with pytest.raises(kiln.ArgumentError,
                       match=r"argument 0 'x': expected a double array of rank 1, got a bool array of rank 1"):
        k(keep, keep, changed)
    with pytest.raises(kiln.ArgumentError, match=r"argument 1 'keep': expected a bool array of rank 1"):
        k(x, True, changed)


def test_metrics_count_what_happened(tmp_path):
    rt = kiln.Runtime(cache_dir=tmp_path, log_level="off")
    k = rt.kernel("update_theta_and_exner", SPEC)
    rt.kernel("update_theta_and_exner", SPEC)
    k(*theta_arrays())
    metrics = rt.metrics()
    theta = metrics["kernels"]["update_theta_and_exner"]
    assert theta["compiles"] == 1 and theta["memory_hits"] == 1
    assert metrics["total"]["compiles"] == 1
    assert theta["phases"]["compile"]["count"] == 1


def test_run_on_threads_gives_the_same_bits(runtime):
    k = runtime.kernel("update_theta_and_exner", SPEC)
    one, two = theta_arrays(), theta_arrays()
    k(*one)
    k.run_on(2, *two)
    for a, b in zip(one, two):
        assert np.array_equal(a, b)
    with pytest.raises(kiln.Error, match=r"threads must be 1 or more"):
        k.run_on(0, *two)
    # libgomp crashed on a team of 65536 (issue 33): refused as KILN_THREADS is, naming the kernel.
    with pytest.raises(kiln.Error, match=r"update_theta_and_exner.*run_on\(65536\).*at most 1024 threads"):
        k.run_on(65536, *two)


def test_bound_takes_new_scalars(runtime):
    spec = dict(horizontal_start=0, horizontal_end=N, vertical_start=1, vertical_end=LEVELS)
    k = runtime.kernel("solve_tridiagonal_matrix_for_w", spec)
    rng = np.random.default_rng(11)
    shapes = [(N,), (N, LEVELS), (N, LEVELS), (N, LEVELS + 1), (N, LEVELS), (N, LEVELS + 1), (N, LEVELS),
              (N, LEVELS), (N, LEVELS)]
    inputs = [rng.uniform(0.5, 1, s) for s in shapes]
    bound_args, direct_args = [a.copy() for a in inputs], [a.copy() for a in inputs]
    bound = k.bind(*bound_args, 0.5, 1000.0)
    bound(0.9, 1004.64)
    k(*direct_args, 0.9, 1004.64)
    for a, b in zip(bound_args, direct_args):
        assert np.array_equal(a, b)
    with pytest.raises(kiln.ArgumentError, match=r"new values for its 2 scalars, got 1"):
        bound(0.9)


def test_threads_call_one_bound_and_one_kernel_at_once(runtime):
    """Calls from several Python threads, the GIL released in each: one Bound shared by all (each
    call works on its own copy of what it hands the kernel) and one Kernel on per-thread arrays."""
    n = 24
    k = runtime.kernel("stencil7", nx=n, ny=n, nz=n, c0=0.5, cx=0.1, cy=0.2, cz=0.3)
    rng = np.random.default_rng(13)
    shared_in, shared_out = rng.uniform(-1, 1, (n, n, n)), np.zeros((n, n, n))
    bound = k.bind(shared_in, shared_out)
    own = [(rng.uniform(-1, 1, (n, n, n)), np.zeros((n, n, n))) for _ in range(4)]
    failures = []

    def work(mine):
        try:
            for _ in range(50):
                bound()
                k(*mine)
        except Exception as error:  # reported below: an assertion in a thread would go unseen
            failures.append(error)

    threads = [threading.Thread(target=work, args=(pair,)) for pair in own]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures
    reference_out = np.zeros((n, n, n))
    k(shared_in.copy(), reference_out)
    assert np.array_equal(shared_out, reference_out)
    for x, out in own:
        expected = np.zeros((n, n, n))
        k(x, expected)
        assert np.array_equal(out, expected)


def test_the_gil_is_released_while_a_kernel_runs(runtime):
    """Another thread runs Python while one thread is inside a long kernel: with the GIL held
    (and the switch interval raised so that it is not taken away) it could not."""
    n = 96
    k = runtime.kernel("stencil7", nx=n, ny=n, nz=n, c0=0.5, cx=0.1, cy=0.1, cz=0.1)
    a, b = np.ones((n, n, n)), np.zeros((n, n, n))
    k(a, b)
    ticks, stop = [], threading.Event()

    def tick():
        while not stop.is_set():
            ticks.append(time.perf_counter())
            time.sleep(0.0005)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(5.0)
    thread = threading.Thread(target=tick)
    thread.start()
    try:
        time.sleep(0.01)
        start = time.perf_counter()
        for _ in range(20):
            k(a, b)
        end = time.perf_counter()
    finally:
        stop.set()
        thread.join()
        sys.setswitchinterval(interval)
    during = [t for t in ticks if start < t < end]
    assert len(during) >= 3, f"{len(during)} ticks in {1e3 * (end - start):.1f} ms of kernel calls"


def test_stubs_and_marker_beside_the_module():
    package = pathlib.Path(kiln.__file__).parent
    assert (package / "py.typed").exists()
    stub = ast.parse((package / "_kiln.pyi").read_text())
    classes = {node.name: node for node in stub.body if isinstance(node, ast.ClassDef)}
    assert {"Runtime", "Kernel", "Bound", "Request", "Mode", "Declaration"} <= set(classes)
    calls = {c: [f for f in classes[c].body if isinstance(f, ast.FunctionDef) and f.name == "__call__"]
             for c in ("Kernel", "Bound")}
    assert all(len(functions) == 1 and ast.get_docstring(functions[0]) for functions in calls.values())
    assert ast.get_docstring(classes["Runtime"])
