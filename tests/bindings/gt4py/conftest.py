"""Fixtures of the GT4Py backend's tests: one kiln backend per session, on a cache of its own.

Run by ctest (tests/bindings/gt4py/CMakeLists.txt) with the package built in the build tree
on PYTHONPATH, or by hand:
    PYTHONPATH=build/bindings/python .venv/bin/python -m pytest tests/bindings/gt4py
"""

import os
import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).parent))  # programs.py
# GT4Py compiles in a pool of spawned processes by default; kiln's backend compiles in the
# calling thread (backend.py), and the embedded reference needs no compiling.
os.environ.setdefault("GT4PY_BUILD_JOBS_MODE", "serial")


@pytest.fixture(scope="session")
def cache_dir(tmp_path_factory):
    return str(tmp_path_factory.mktemp("kiln-cache"))


@pytest.fixture(scope="session")
def backend(cache_dir):
    """The default backend: GT4Py's IR translated as lowered, its transforms as a fallback."""
    import kiln.gt4py

    return kiln.gt4py.backend(cache_dir=cache_dir, log_level="off")


@pytest.fixture(scope="session")
def direct(cache_dir):
    """Never GT4Py's transforms: a construct test passes by the direct translation alone."""
    import kiln.gt4py

    return kiln.gt4py.backend(cache_dir=cache_dir, log_level="off", gt4py_transforms="never")


@pytest.fixture(scope="session")
def transformed(cache_dir):
    """GT4Py's transforms first (as gtfn): temporaries, unrolled reductions."""
    import kiln.gt4py

    return kiln.gt4py.backend(cache_dir=cache_dir, log_level="off", gt4py_transforms="always")
