"""Fixtures of the kiln package's tests: one Runtime per test session, on a cache of its own.

Run by ctest (tests/bindings/python/CMakeLists.txt) with the package built in the build
tree on PYTHONPATH, or by hand:
    PYTHONPATH=build/bindings/python .venv/bin/python -m pytest tests/bindings/python
"""

import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).parent))  # layouts.py, references.py

import kiln  # noqa: E402


@pytest.fixture(scope="session")
def cache_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("kiln-cache")


@pytest.fixture(scope="session")
def runtime(cache_dir):
    """Shared by the tests: each (kernel, spec) compiles once per session."""
    return kiln.Runtime(cache_dir=cache_dir, log_level="off")
