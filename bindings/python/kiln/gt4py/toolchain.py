"""The GT4Py backend (kiln.gt4py.backend() builds it): GT4Py's transforms, then translation, compilation and decoration.

Shaped as GT4Py's own compiled backends: `Backend(executor=<workflow>, allocator, transforms)`
whose executor is a `NamedStepSequence` of named steps,
  translation  (CompilableProgramDef -> KernelTemplate)  GT4Py's IR transforms, then kiln's
               translation; a `CachedStep` keyed by the program's fingerprint (its IR, the
               argument types, the offset provider), in memory and on disk beside kiln's
               cache, so neither a warm process nor a second variant translates again;
  compilation  (KernelTemplate -> KilnArtifact)  binds the text to the backend's kiln
               Runtime; kiln compiles at the first call of each shape signature, when the
               extents and strides it specialises on are known (GT4Py gives only types here);
  decoration   (`KilnArtifact.load()`)  the callable GT4Py calls: call.KilnProgram.
`compile` runs in the calling thread: GT4Py would otherwise ship every compile to a spawned
process pool (seconds to start and import GT4Py), while kiln's translation takes
milliseconds and kiln compiles in its own worker process anyway; and the Runtime cannot be
pickled into such a process.
"""

from __future__ import annotations

import dataclasses
import pathlib
from typing import Any

import kiln

from .call import KilnProgram
from .translation import TranslationStep
from .translation.template import KernelTemplate



def _gt4py():
    from gt4py.next import backend as gtx_backend, custom_layout_allocators, fingerprinting
    from gt4py.next.otf import workflow

    return gtx_backend, custom_layout_allocators, fingerprinting, workflow


@dataclasses.dataclass(frozen=True)
class RuntimeHolder:
    """The backend's kiln.Runtime; compares by identity, so fingerprints and dataclass
    equality never look into it."""

    runtime: Any
    sources: dict = dataclasses.field(default_factory=dict)  # kernel name -> kiln text, as registered
    comm: Any = None  # backend(comm=...): an mpi4py communicator the kernels are resolved over

    def __eq__(self, other):
        return self is other

    def __hash__(self):
        return id(self)


@dataclasses.dataclass(frozen=True)
class KilnArtifact:
    template: KernelTemplate
    holder: RuntimeHolder
    mode: str
    run_time: Any

    def load(self) -> KilnProgram:
        holder = self.holder
        return KilnProgram(self.template, holder.runtime, self.mode, self.run_time, holder.sources, holder.comm)


@dataclasses.dataclass(frozen=True)
class CompilationStep:
    holder: RuntimeHolder
    mode: str
    run_time: Any

    def __call__(self, template: KernelTemplate) -> KilnArtifact:
        return KilnArtifact(template, self.holder, self.mode, self.run_time)


def _workflow_class():
    _, _, _, workflow = _gt4py()

    @dataclasses.dataclass(frozen=True)
    class KilnWorkflow(workflow.NamedStepSequence):
        translation: Any
        compilation: Any
        step_order = ["translation", "compilation"]  # GT4Py reads it from type hints otherwise

    return KilnWorkflow


def _backend_class():
    gtx_backend, _, _, _ = _gt4py()

    @dataclasses.dataclass(frozen=True)
    class KilnBackend(gtx_backend.Backend):
        runtime: Any = None  # the kiln.Runtime every program of this backend compiles through
        holder: Any = None

        def kernel_sources(self) -> dict[str, str]:
            """The kiln kernel text of every kernel this backend registered, by kernel name
            (`<program>_<digest>`): what the translation made of each program."""
            return dict(self.holder.sources)

        def compile(self, program, compile_time_args):
            # Same as Backend.compile; overriding it keeps GT4Py from offloading (see module).
            return super().compile(program, compile_time_args)

    return KilnBackend


def make_backend(**settings):
    gtx_backend, allocators, fingerprinting, workflow = _gt4py()
    mode = settings.pop("mode", "specialised")
    run_time = settings.pop("run_time", "horizontal")
    gt4py_transforms = settings.pop("gt4py_transforms", "fallback")
    if gt4py_transforms not in ("fallback", "always", "never"):
        raise ValueError(f"kiln.gt4py.backend: gt4py_transforms must be 'fallback', 'always' or 'never', got {gt4py_transforms!r}")
    if mode not in ("specialised", "generic"):
        raise ValueError(f"kiln.gt4py.backend: mode must be 'specialised' or 'generic', got {mode!r}")
    if isinstance(run_time, str) and run_time not in ("horizontal", "all", "none"):
        raise ValueError(f"kiln.gt4py.backend: run_time must be 'horizontal', 'all', 'none' or names, got {run_time!r}")
    if not isinstance(run_time, str):
        run_time = tuple(run_time)
    comm = settings.pop("comm", None)
    if comm is not None:
        from ..mpi import communicator

        communicator(comm)  # refused here, not at a program's first call
    runtime = kiln.Runtime(**settings)
    holder = RuntimeHolder(runtime, comm=comm)
    translations = workflow.CachedStep(
        step=TranslationStep(gt4py_transforms),
        input_fingerprinter=fingerprinting.strict_fingerprinter,
        step_fingerprinter=fingerprinting.lenient_fingerprinter,
        cache=_translation_cache(runtime),
    )
    executor = _workflow_class()(
        translation=translations, compilation=CompilationStep(holder, mode, run_time)
    )
    return _backend_class()(
        name=f"kiln_cpu_{mode}",
        executor=executor,
        allocator=allocators.StandardCPUFieldBufferAllocator(),
        transforms=gtx_backend.DEFAULT_TRANSFORMS,
        runtime=runtime,
        holder=holder,
    )


class _TwoLevelCache:
    """A dict in front of GT4Py's FileCache in `<kiln cache_dir>/gt4py-translations`."""

    def __init__(self, path: pathlib.Path | None):
        from gt4py._core import filecache

        self._memory: dict = {}
        self._disk = filecache.FileCache(path) if path is not None else None

    def __getitem__(self, key):
        if key in self._memory:
            return self._memory[key]
        if self._disk is None:
            raise KeyError(key)
        value = self._memory[key] = self._disk[key]
        return value

    def __setitem__(self, key, value):
        self._memory[key] = value
        if self._disk is not None:
            self._disk[key] = value

    def __contains__(self, key):
        return key in self._memory or (self._disk is not None and key in self._disk)


def _translation_cache(runtime) -> _TwoLevelCache:
    config = runtime.config
    if config.get("cache_disable"):
        return _TwoLevelCache(None)
    path = pathlib.Path(config["cache_dir"]) / "gt4py-translations"
    path.mkdir(parents=True, exist_ok=True)
    return _TwoLevelCache(path)
