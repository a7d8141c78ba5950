"""Where a GT4Py program's first call goes: GT4Py's part and the backend's part.

``timed(backend)`` returns a copy of a GT4Py ``Backend`` whose two workflows
record their time: ``transforms`` (GT4Py's own lowering: PAST and field view to
GTIR and its passes) and ``executor`` (for kiln: translation and binding to the
Runtime), and whose loaded program records its first call (for kiln: the
kernel's compile or cache load, then the run). Everything else in the first
call is GT4Py's Python around them (argument types, the compiled-program key).
Only the GT4Py ``Backend`` interface is used, so it times any backend; a backend
that looks a program up before GT4Py lowers it (kiln's ``lookup``: on a hit GT4Py's
transforms and the executor are skipped) has that lookup timed as its part. GT4Py's
IR passes (``pass_manager.apply_common_transforms``), which a backend's executor
runs (kiln's translation and gtfn's both do), are timed too, during
``first_call`` only, and counted as GT4Py's.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any


@dataclasses.dataclass
class FirstCall:
    """Seconds spent in each part of a program's first call."""

    gt4py_transforms: float = 0.0
    gt4py_passes: float = 0.0  # inside the executor
    executor: float = 0.0
    loaded_first_call: float = 0.0
    total: float = 0.0
    #: GT4Py's `Program.with_backend` before the call (it parses the program again, or
    #: fingerprints it to find its parse): GT4Py's, outside `total`.
    with_backend: float = 0.0
    #: What the backend loaded (kiln: call.KilnProgram), for a bound call after the first.
    loaded: Any = None

    @property
    def gt4py(self) -> float:
        """GT4Py's part: its transforms, its IR passes and its Python around the backend."""
        return self.total - self.backend

    @property
    def backend(self) -> float:
        """The backend's part: its executor but GT4Py's passes, the first call of what it loaded."""
        return self.executor - self.gt4py_passes + self.loaded_first_call


class _Timed:
    """A callable step that adds its time to one field of a FirstCall."""

    def __init__(self, step, record: FirstCall, field: str, wrap_result=None):
        self._step, self._record, self._field, self._wrap = step, record, field, wrap_result

    def __call__(self, *args, **kwargs):
        start = time.perf_counter()
        result = self._step(*args, **kwargs)
        elapsed = time.perf_counter() - start
        setattr(self._record, self._field, getattr(self._record, self._field) + elapsed)
        return self._wrap(result) if self._wrap else result

    def __getattr__(self, name: str) -> Any:  # GT4Py reads attributes of its workflows
        return getattr(self._step, name)


class _TimedArtifact:
    def __init__(self, artifact, record: FirstCall):
        self._artifact, self._record = artifact, record

    def load(self):
        loaded = self._record.loaded = self._artifact.load()
        first = [True]

        def call(*args, **kwargs):
            if not first[0]:
                return loaded(*args, **kwargs)
            first[0] = False
            start = time.perf_counter()
            result = loaded(*args, **kwargs)
            self._record.loaded_first_call += time.perf_counter() - start
            return result

        return call

    def __getattr__(self, name: str) -> Any:
        return getattr(self._artifact, name)


class _TimedLookup:
    """kiln's TranslationLookup, timed as the executor: (key, artifact or None) and remember."""

    def __init__(self, lookup, record: FirstCall):
        self._lookup, self._record = lookup, record

    def __call__(self, *args):
        key, artifact = _Timed(self._lookup, self._record, "executor")(*args)
        return key, None if artifact is None else _TimedArtifact(artifact, self._record)

    def remember(self, key, artifact) -> None:
        _Timed(self._lookup.remember, self._record, "executor")(key, artifact)


def timed(backend) -> tuple[Any, FirstCall]:
    """A copy of backend that times its parts, and the record it fills."""
    record = FirstCall()
    executor = _Timed(backend.executor, record, "executor", lambda a: _TimedArtifact(a, record))
    parts = {"executor": executor, "transforms": _timed_transforms(backend.transforms, record)}
    if getattr(backend, "lookup", None) is not None:
        parts["lookup"] = _TimedLookup(backend.lookup, record)
    return dataclasses.replace(backend, **parts), record


def _timed_transforms(transforms, record: FirstCall):
    """transforms as an instance of a subclass of its class that times its calls: GT4Py
    requires a `Transforms` there (it calls its steps one by one for other stages)."""

    class TimedTransforms(type(transforms)):
        def __call__(self, *args, **kwargs):
            start = time.perf_counter()
            result = super().__call__(*args, **kwargs)
            record.gt4py_transforms += time.perf_counter() - start
            return result

    values = {f.name: getattr(transforms, f.name) for f in dataclasses.fields(transforms) if f.init}
    return TimedTransforms(**values)


_collecting: list[FirstCall] = []  # records that GT4Py's IR passes add their time to


def _time_gt4py_passes() -> None:
    """Wraps GT4Py's pass manager once per process (backends look it up at each call)."""
    from gt4py.next.iterator.transforms import pass_manager

    passes = pass_manager.apply_common_transforms
    if getattr(passes, "kiln_timed", False):
        return

    def timed_passes(*args, **kwargs):
        start = time.perf_counter()
        try:
            return passes(*args, **kwargs)
        finally:
            for record in _collecting:
                record.gt4py_passes += time.perf_counter() - start

    timed_passes.kiln_timed = True
    pass_manager.apply_common_transforms = timed_passes


def first_call(program, backend, args: dict, offset_provider) -> tuple[FirstCall, Any]:
    """Runs program's first call on backend, timed by parts; the record and the program."""
    _time_gt4py_passes()
    if backend is None:  # embedded: nothing compiled, all of it GT4Py's
        backend, record = None, FirstCall()
    else:
        backend, record = timed(backend)
    start = time.perf_counter()
    run = program.with_backend(backend)
    record.with_backend = time.perf_counter() - start
    _collecting.append(record)
    try:
        start = time.perf_counter()
        run(**args, offset_provider=offset_provider)
        record.total = time.perf_counter() - start
    finally:
        _collecting.remove(record)
    return record, run
