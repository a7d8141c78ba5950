"""Every failure raises the kiln exception its C++ twin would be, naming what is wrong."""

import numpy as np
import pytest

import kiln

N, LEVELS = 7, 4
SPEC = dict(horizontal_start=0, horizontal_end=N, vertical_start=0, vertical_end=LEVELS, rd_o_cvd=0.4)


@pytest.fixture
def arrays():
    """update_theta_and_exner's arguments, C order."""
    return [np.full((N, LEVELS), 300.0), np.full((N, LEVELS), 0.9), np.ones(N), np.zeros((N, LEVELS))]


@pytest.fixture(scope="module")
def theta(runtime):
    return runtime.kernel("update_theta_and_exner", SPEC)


def test_hierarchy_mirrors_kiln_errors_hpp():
    assert issubclass(kiln.Error, RuntimeError)  # kiln::Error is a std::runtime_error
    for name in ("UnknownKernelError", "KernelSourceError", "SpecError", "ArgumentError", "CompileError",
                 "ToolchainError", "LoadError", "GpuError"):
        cls = getattr(kiln, name)
        assert cls.__bases__ == (kiln.Error,), name
        assert cls.__module__ == "kiln.errors"


def test_wrong_dtype_names_the_argument(theta, arrays):
    arrays[2] = arrays[2].astype(np.float32)
    with pytest.raises(kiln.ArgumentError, match=r"argument 2 'area'.*double.*float"):
        theta(*arrays)


def test_dtype_kiln_does_not_take_names_the_argument(theta, arrays):
    arrays[1] = arrays[1].astype(np.complex128)
    with pytest.raises(kiln.ArgumentError, match=r"'exner': dtype complex128"):
        theta(*arrays)
    arrays[1] = np.full((N, LEVELS), 0.9, dtype=">f8")  # not this machine's byte order
    with pytest.raises(kiln.ArgumentError, match=r"'exner': dtype >f8"):
        theta(*arrays)


def test_wrong_rank_names_the_argument(theta, arrays):
    arrays[2] = np.ones((N, 1))
    with pytest.raises(kiln.ArgumentError, match=r"'area'.*rank 1.*rank 2"):
        theta(*arrays)


def test_wrong_shape_names_the_argument(theta, arrays):
    arrays[2] = np.ones(N - 2)  # shorter than the domain, and than the other arrays' cells
    with pytest.raises(kiln.ArgumentError, match=r"'area'"):
        theta(*arrays)
    arrays[2] = np.ones(N)
    arrays[3] = np.zeros((N, LEVELS - 1))
    with pytest.raises(kiln.ArgumentError, match=r"'z_temp'"):
        theta(*arrays)


def test_strides_other_than_specialised_name_the_argument(runtime, arrays):
    k = runtime.kernel("update_theta_and_exner", SPEC, strides_of={"exner": arrays[1]})
    arrays[1] = np.asfortranarray(arrays[1])
    with pytest.raises(kiln.ArgumentError, match=r"'exner': strides \(1, 7\) differ .* \(4, 1\)"):
        k(*arrays)


def test_wrong_count_lists_the_arguments(theta, arrays):
    with pytest.raises(kiln.ArgumentError, match=r"takes 4 arguments \(theta_v, exner, area, z_temp\), got 3"):
        theta(*arrays[:3])


def test_not_an_array_names_the_argument(theta, arrays):
    arrays[0] = [[300.0] * LEVELS] * N
    with pytest.raises(kiln.ArgumentError, match=r"argument 0 'theta_v': expected a double array of rank 2 .*list"):
        theta(*arrays)


def test_misaligned_arrays_name_the_argument(theta, arrays):
    raw = np.zeros(N * 8 + 1, dtype=np.uint8)[1:].view(np.float64)  # one byte off
    assert not raw.flags.aligned
    arrays[2] = raw
    with pytest.raises(kiln.ArgumentError, match=r"'area': .*not aligned"):
        theta(*arrays)
    arrays[2] = np.lib.stride_tricks.as_strided(np.zeros(4 * N), shape=(N,), strides=(12,))
    with pytest.raises(kiln.ArgumentError, match=r"'area': .*not aligned"):  # a stride of 1.5 elements
        theta(*arrays)


def test_scalar_arguments_take_their_declared_kind(runtime):
    k = runtime.kernel("solve_tridiagonal_matrix_for_w",
                       dict(horizontal_start=0, horizontal_end=N, vertical_start=1, vertical_end=LEVELS))
    arrays = [np.ones(N)] + [np.ones((N, LEVELS))] * 2 + [np.ones((N, LEVELS + 1))] + [np.ones((N, LEVELS))] + \
             [np.ones((N, LEVELS + 1))] + [np.ones((N, LEVELS))] * 3
    with pytest.raises(kiln.ArgumentError, match=r"argument 9 'dtime': expected a double scalar, got str"):
        k(*arrays, "0.5", 1004.0)
    with pytest.raises(kiln.ArgumentError, match=r"argument 10 'cpd': expected a double scalar, got numpy.ndarray"):
        k(*arrays, 0.5, np.ones(1))
    k(*arrays, 1, np.float32(1004.0))  # an int and NumPy's float32 are numbers too


def test_unknown_kernel(runtime):
    with pytest.raises(kiln.UnknownKernelError, match=r"unknown kernel 'no_such_kernel'; known kernels: .*stencil7"):
        runtime.kernel("no_such_kernel", SPEC)


def test_bad_specs_name_the_parameter(runtime):
    with pytest.raises(kiln.SpecError, match=r"parameter 'rd_o_cvd': missing"):
        runtime.kernel("update_theta_and_exner", {k: v for k, v in SPEC.items() if k != "rd_o_cvd"})
    with pytest.raises(kiln.SpecError, match=r"parameter 'rd_o_cvd': a str is none of bool, int, float"):
        runtime.kernel("update_theta_and_exner", dict(SPEC, rd_o_cvd="0.4"))
    with pytest.raises(kiln.SpecError, match=r"'horizontal_end'"):
        runtime.kernel("update_theta_and_exner", dict(SPEC, horizontal_end=1.5))
    with pytest.raises(kiln.SpecError, match=r"'not_a_parameter'"):
        runtime.kernel("update_theta_and_exner", SPEC, not_a_parameter=3)
    with pytest.raises(kiln.SpecError, match=r"parameter 'rd_o_cvd' is given twice"):
        runtime.kernel("update_theta_and_exner", SPEC, rd_o_cvd=0.5)
    with pytest.raises(kiln.SpecError, match=r"run_time\('nrdmax'\)"):
        runtime.kernel("update_theta_and_exner", SPEC, run_time=["nrdmax"])
    with pytest.raises(kiln.SpecError, match=r"strides_of 'area': expected a double array"):
        runtime.kernel("update_theta_and_exner", SPEC, strides_of={"area": 3.0})


def test_mode_must_be_one_of_two(runtime):
    with pytest.raises(kiln.Error, match=r"mode 'fast'"):
        runtime.kernel("update_theta_and_exner", SPEC, mode="fast")


def test_kernel_source_and_compile_errors(runtime):
    with pytest.raises(kiln.KernelSourceError):
        runtime.register_kernel("#pragma kiln kernel\n", "broken.kiln")
    name = runtime.register_kernel(
        "#pragma kiln kernel py_does_not_compile\n#pragma kiln array double x[cells]\n#pragma kiln domain start end\n"
        "#pragma kiln size cells contains start end\nthis is not C++;\n", "bad.kiln")
    with pytest.raises(kiln.CompileError) as raised:
        runtime.kernel(name, start=0, end=4)
    assert "bad.kiln:5" in raised.value.diagnostics
    assert "py_does_not_compile" in str(raised.value)


def test_unknown_setting(tmp_path):
    with pytest.raises(kiln.Error, match=r"unknown setting 'cache_folder'; settings: cache_dir"):
        kiln.Runtime(cache_folder=tmp_path)
    with pytest.raises(kiln.Error, match=r"setting 'threads': expected an int"):
        kiln.Runtime(cache_dir=tmp_path, threads="2")


def test_runtime_refuses_bad_values(tmp_path):
    for setting, value, message in [("opt_level", "O9", r"opt_level 'O9'"), ("fp_contract", "maybe", r"'maybe'"),
                                    ("target_cpu", "pentium-9000", r"'pentium-9000'"),
                                    ("log_level", "loud", r"'loud'")]:
        with pytest.raises(kiln.Error, match=message):
            kiln.Runtime(cache_dir=tmp_path, **{setting: value})


def test_every_kind_of_cpp_error_arrives_as_its_python_class():
    """One taxonomy: kiln::ErrorKind's order, each kind raised as its class of kiln.errors."""
    names = ("Error", "UnknownKernelError", "KernelSourceError", "SpecError", "ArgumentError", "CompileError",
             "ToolchainError", "LoadError", "GpuError")
    for kind, name in enumerate(names):
        with pytest.raises(kiln.Error) as raised:
            kiln._kiln._throw_error(kind, f"kiln: a {name}")
        assert type(raised.value) is getattr(kiln, name), (kind, name)
        if name == "CompileError":
            assert raised.value.diagnostics == "the diagnostics"
            assert "does not compile" in str(raised.value)
        else:
            assert str(raised.value) == f"kiln: a {name}"
    with pytest.raises(ValueError):
        kiln._kiln._throw_error(len(names), "no such kind")


def test_integers_past_64_bits_and_type_names_are_told_plainly(runtime, tmp_path):
    """Issue 33, item 10: 2**63 as a stride and 10**30 threads raised std::bad_cast; "a int"."""
    with pytest.raises(kiln.SpecError,
                       match=r"kernel 'update_theta_and_exner', array 'area': stride 9223372036854775808 does "
                             r"not fit a 64-bit integer"):
        runtime.kernel("update_theta_and_exner", SPEC, area=(2**63,))
    with pytest.raises(kiln.SpecError, match=r"parameter 'horizontal_end': 9223372036854775808 does not fit"):
        runtime.kernel("update_theta_and_exner", dict(SPEC, horizontal_end=2**63))
    with pytest.raises(kiln.Error, match=r"setting 'threads': expected a 64-bit integer, got 1000000000000000000000000000000"):
        kiln.Runtime(cache_dir=tmp_path, threads=10**30)
    with pytest.raises(kiln.Error, match=r"got an int\b"):
        kiln.Runtime(cache_dir=5)
