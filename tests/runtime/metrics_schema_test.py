"""The metrics JSON a real Runtime writes (KILN_METRICS_FILE, from `kiln demo`
and `kiln run`) is valid against docs/metrics.schema.json, and holds together:
sums and phases agree, the timeline names every kernel, its times are in the
order things happened. The schema itself refuses what it should."""

import copy
import json
import os
import subprocess
from pathlib import Path

import jsonschema
import pytest

KILN = os.environ["KILN_TOOL"]
SCHEMA = json.loads(Path(os.environ["KILN_METRICS_SCHEMA"]).read_text())
RUN_PHASES = ("first_call", "run")


def metrics_of(args, folder):
    path = folder / "metrics.json"
    environment = {k: v for k, v in os.environ.items() if not k.startswith("KILN_")}
    environment.update({"KILN_LOG_LEVEL": "error", "KILN_CACHE_DIR": str(folder / "cache"),
                        "KILN_METRICS_FILE": str(path)})
    result = subprocess.run([KILN, *args], env=environment, capture_output=True, text=True, timeout=600,
                            cwd=folder)
    assert result.returncode == 0, result.stdout + result.stderr
    return json.loads(path.read_text())


@pytest.fixture(scope="module")
def demo_metrics(tmp_path_factory):
    return metrics_of(["demo", "--nx", "4", "--ny", "4", "--levels", "4", "--steps", "2"],
                      tmp_path_factory.mktemp("demo"))


def test_the_schema_is_a_valid_draft_2020_12_schema():
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


def test_the_demo_metrics_are_valid(demo_metrics):
    jsonschema.validate(demo_metrics, SCHEMA)
    assert demo_metrics["schema_version"] == 2
    assert len(demo_metrics["kernels"]) == 14  # 7 kernels, specialised and generic


def test_sums_and_timeline_hold_together(demo_metrics):
    for name, k in [*demo_metrics["kernels"].items(), ("total", demo_metrics["total"])]:
        init = sum(p["total_ms"] for phase, p in k["phases"].items() if phase not in RUN_PHASES)
        run = sum(p["total_ms"] for phase, p in k["phases"].items() if phase in RUN_PHASES)
        assert k["init_ms"] == pytest.approx(init) and k["run_ms"] == pytest.approx(run), name
    timeline = demo_metrics["timeline"]
    assert sorted(e["kernel"] for e in timeline) == sorted(demo_metrics["kernels"])
    requested = [e["requested_ms"] for e in timeline]
    assert requested == sorted(requested)
    process = demo_metrics["process"]
    assert process["start_known"] and process["start_resolution_ms"] > 0
    assert process["first_request_ms"] == min(requested)
    assert process["first_call_ms"] == min(e["first_call_ms"] for e in timeline)
    for e in timeline:
        assert process["runtime_created_ms"] <= e["requested_ms"] <= e["first_call_ms"] <= process["wall_ms"]


def test_kiln_run_metrics_are_valid(tmp_path):
    metrics = metrics_of(["run", "update_theta_and_exner", "--spec",
                          "horizontal_start=0,horizontal_end=8,vertical_start=0,vertical_end=2,rd_o_cvd=0.4",
                          "--shape", "theta_v=8x2", "--shape", "exner=8x2", "--shape", "area=8",
                          "--shape", "z_temp=8x2", "--out", str(tmp_path / "out")], tmp_path)
    jsonschema.validate(metrics, SCHEMA)
    assert list(metrics["kernels"]) == ["update_theta_and_exner"]


@pytest.mark.parametrize("break_it", [
    lambda m: m.pop("schema_version"),
    lambda m: m.update(schema_version=1),
    lambda m: m["process"].pop("wall_ms"),
    lambda m: m["total"]["phases"].update(waiting={"count": 1, "min_ms": 0, "avg_ms": 0, "max_ms": 0, "total_ms": 0}),
    lambda m: m["timeline"].append({"kernel": "x"}),
    lambda m: m["total"].update(compiles=-1),
], ids=["no version", "version 1", "no wall time", "unknown phase", "timeline entry without times", "negative count"])
def test_the_schema_refuses_broken_metrics(demo_metrics, break_it):
    broken = copy.deepcopy(demo_metrics)
    break_it(broken)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, SCHEMA)
