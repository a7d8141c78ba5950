"""Tiered start from Python (docs/manual/tiered-start.md): Runtime(tiered=True) compiles a specialised
miss's generic build first, Runtime.wait_for_specialised() returns with the specialised build in, and
the metrics count each build's compiles and calls exactly; the generic build computes the same bits."""

import numpy as np
import pytest

import kiln

N, LEVELS = 11, 3
NAME = "update_theta_and_exner"
SPEC = dict(horizontal_start=0, horizontal_end=N, vertical_start=0, vertical_end=LEVELS, rd_o_cvd=0.4)


def run(kernel):
    arrays = [np.full((N, LEVELS), 300.0), np.full((N, LEVELS), 0.9), np.linspace(0.5, 1.5, N),
              np.full((N, LEVELS), 0.25)]
    kernel(*arrays)
    return arrays


def calls(metrics, row):
    phases = metrics["kernels"][row]["phases"]
    return sum(phases[p]["count"] for p in ("first_call", "run") if p in phases)


def test_the_setting_compiles_the_generic_build_first_and_the_wait_brings_the_specialised_one(tmp_path):
    rt = kiln.Runtime(cache_dir=tmp_path, tiered=True, time_calls=True, log_level="off")
    assert rt.config["tiered"] is True
    k = rt.kernel(NAME, SPEC)  # a miss: the generic build compiled now, the specialised one queued
    rt.wait_for_specialised()
    specialised = [run(k) for _ in range(3)][-1]
    metrics = rt.metrics()
    assert metrics["kernels"][f"{NAME} (generic)"]["compiles"] == 1  # nothing asked for it but the miss
    assert metrics["kernels"][NAME]["compiles"] == 1
    assert calls(metrics, NAME) == 3 and calls(metrics, f"{NAME} (generic)") == 0
    # Its own build at Config.opt_level: the stand-in was compiled at tiered_opt_level (O1), another entry.
    generic = run(rt.kernel(NAME, SPEC, mode="generic"))
    metrics = rt.metrics()
    assert metrics["kernels"][f"{NAME} (generic)"]["compiles"] == 2
    assert calls(metrics, f"{NAME} (generic)") == 1
    assert all(np.array_equal(a, b) for a, b in zip(specialised, generic))


def test_a_batch_is_tiered_too(tmp_path):
    rt = kiln.Runtime(cache_dir=tmp_path, tiered=True, time_calls=True, log_level="off")
    specs = [dict(SPEC, rd_o_cvd=0.4), dict(SPEC, rd_o_cvd=0.5)]
    kernels = rt.kernels([(NAME, spec) for spec in specs])
    rt.wait_for_specialised()
    for k in kernels:
        run(k)
    metrics = rt.metrics()
    assert metrics["kernels"][f"{NAME} (generic)"]["compiles"] == 1  # one generic build stood in for both
    assert metrics["kernels"][NAME]["compiles"] == 2
    assert calls(metrics, NAME) == 2 and calls(metrics, f"{NAME} (generic)") == 0


def test_off_by_default_and_refused_when_not_a_bool(tmp_path):
    rt = kiln.Runtime(cache_dir=tmp_path, log_level="off")
    assert rt.config["tiered"] is False
    rt.kernel(NAME, SPEC)
    rt.wait_for_specialised()  # nothing queued: returns at once
    assert f"{NAME} (generic)" not in rt.metrics()["kernels"]
    with pytest.raises(kiln.Error, match="setting 'tiered': expected True or False, got 1"):
        kiln.Runtime(cache_dir=tmp_path, tiered=1)
