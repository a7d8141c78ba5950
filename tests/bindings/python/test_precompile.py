"""Runtime.precompile: a kernel into the cache without loading it, for the CPU target or a GPU
architecture (NVRTC where it loads; the GT4Py backend's compile_for_gpu rests on it)."""

import pathlib

import pytest

import kiln

SPEC = dict(horizontal_start=0, horizontal_end=11, vertical_start=0, vertical_end=3, rd_o_cvd=0.4)


def entry(runtime, key: str) -> pathlib.Path:
    return pathlib.Path(runtime.config["cache_dir"]) / key[:2] / key[2:]


def test_a_cpu_precompile_is_what_kernel_then_finds(tmp_path):
    runtime = kiln.Runtime(cache_dir=str(tmp_path))
    key = runtime.precompile("update_theta_and_exner", SPEC)
    assert len(key) == 32 and entry(runtime, key).stat().st_size > 0
    later = kiln.Runtime(cache_dir=str(tmp_path))
    assert later.kernel("update_theta_and_exner", SPEC).key == key
    assert later.metrics()["kernels"]["update_theta_and_exner"]["compiles"] == 0


def test_a_gpu_precompile_is_another_entry(tmp_path):
    runtime = kiln.Runtime(cache_dir=str(tmp_path))
    try:
        key = runtime.precompile("update_theta_and_exner", SPEC, gpu="sm_90")
    except kiln.ToolchainError as missing:
        pytest.skip(f"no NVRTC here: {missing}")
    assert entry(runtime, key).read_bytes()[:4] == b"\x7fELF"  # a CUBIN, at the entry's offset 0
    assert key != runtime.precompile("update_theta_and_exner", SPEC)


def test_bad_requests_are_named(tmp_path):
    runtime = kiln.Runtime(cache_dir=str(tmp_path))
    with pytest.raises(kiln.Error, match="backend must be 'cuda' or 'hip', got 'metal'"):
        runtime.precompile("update_theta_and_exner", SPEC, gpu="sm_90", backend="metal")
    with pytest.raises(kiln.SpecError, match="rd_o_cvd"):
        runtime.precompile("update_theta_and_exner", {k: v for k, v in SPEC.items() if k != "rd_o_cvd"})
    with pytest.raises(kiln.UnknownKernelError):
        runtime.precompile("no_such_kernel", SPEC, gpu="sm_90")
