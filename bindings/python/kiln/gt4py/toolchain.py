"""The GT4Py backend (kiln.gt4py.backend() builds it): GT4Py's transforms, then translation, compilation and decoration.

Shaped as GT4Py's own compiled backends: `Backend(executor=<workflow>, allocator, transforms)`
whose executor is a `NamedStepSequence` of named steps,
  translation  (CompilableProgramDef -> KernelTemplate)  kiln's translation of GT4Py's IR
               (GT4Py's IR transforms first where the direct translation refuses);
  compilation  (KernelTemplate -> KilnArtifact)  binds the text to the backend's kiln
               Runtime; kiln compiles at the first call of each shape signature, when the
               extents and strides it specialises on are known (GT4Py gives only types here);
  decoration   (`KilnArtifact.load()`)  the callable GT4Py calls: call.KilnProgram.
`compile` looks the program up first (`TranslationLookup`): by a key computed from what GT4Py
has before lowering (program_key: the DSL sources and the values they name, the argument
types, the offset provider's type), in memory and in `<kiln cache_dir>/gt4py-translations`. A
hit skips GT4Py's lowering (past_to_gtir, 0.03-0.3 s a program here) and the translation, so
neither a warm process nor a second variant lowers or translates again.
`compile` runs in the calling thread: GT4Py would otherwise ship every compile to a spawned
process pool (seconds to start and import GT4Py), while kiln's translation takes
milliseconds and kiln compiles in its own worker process anyway; and the Runtime cannot be
pickled into such a process.
"""

from __future__ import annotations

import dataclasses
import os
import pathlib
import pickle
import stat
import tempfile
import warnings
from typing import Any

import kiln

from . import program_key
from .call import KilnProgram
from .translation import VERSION, TranslationStep
from .translation.template import KernelTemplate


def _gt4py():
    from gt4py.next import backend as gtx_backend, custom_layout_allocators
    from gt4py.next.otf import workflow

    return gtx_backend, custom_layout_allocators, workflow


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


def _stages():
    from gt4py.next.otf import stages

    return stages


def _workflow_class():
    _, _, workflow = _gt4py()

    @dataclasses.dataclass(frozen=True)
    class KilnWorkflow(workflow.NamedStepSequence):
        translation: Any
        compilation: Any
        step_order = ["translation", "compilation"]  # GT4Py reads it from type hints otherwise

    return KilnWorkflow


def _backend_class():
    gtx_backend, _, _ = _gt4py()

    @dataclasses.dataclass(frozen=True)
    class KilnBackend(gtx_backend.Backend):
        runtime: Any = None  # the kiln.Runtime every program of this backend compiles through
        holder: Any = None
        lookup: Any = None  # TranslationLookup: a warm program's artifact without lowering it

        def kernel_sources(self) -> dict[str, str]:
            """The kiln kernel text of every kernel this backend registered, by kernel name
            (`<program>_<digest>`): what the translation made of each program."""
            return dict(self.holder.sources)

        def compile(self, program, compile_time_args):
            # Overriding it also keeps GT4Py from offloading (see module).
            key, artifact = self.lookup(program, compile_time_args)
            if artifact is None:
                artifact = self.executor(self.transforms(_stages().ConcreteProgramDef(program, compile_time_args)))
                self.lookup.remember(key, artifact)
            return self.load_artifact(artifact)

    return KilnBackend


def make_backend(**settings):
    gtx_backend, allocators, _ = _gt4py()
    # GT4Py warns at every program's first call that this backend compiles in the calling
    # thread, which it does on purpose (module docstring): the warning would say nothing to
    # act on, once per program.
    warnings.filterwarnings("ignore", message=r"Compiling 'kiln_cpu_\w+' in the calling thread", category=UserWarning)
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
    compilation = CompilationStep(holder, mode, run_time)
    executor = _workflow_class()(translation=TranslationStep(gt4py_transforms), compilation=compilation)
    import gt4py

    salt = f"{VERSION}:{program_key.module_digest()}:gt4py {gt4py.__version__}:{gt4py_transforms}"
    return _backend_class()(
        name=f"kiln_cpu_{mode}",
        executor=executor,
        allocator=allocators.StandardCPUFieldBufferAllocator(),
        transforms=_transforms(),
        runtime=runtime,
        holder=holder,
        lookup=TranslationLookup(_translation_store(runtime), salt, compilation),
    )


def _transforms():
    """GT4Py's front-end transforms with three of its in-memory caches replaced: each was
    keyed by GT4Py's fingerprint of the whole program or its PAST, some 65% of the
    transforms' 0.1-1 s a program here. The lowering (past_to_gtir) runs uncached: the
    lookup caches its product, and a lookup hit skips the transforms. The parse
    (func_to_past) is looked up by program_key's digest of the definition first. The lint
    (past_lint, which `with_backend` runs too) runs uncached: ~2 ms a program against
    16-35 ms for fingerprinting its PAST."""
    from gt4py.next import backend as gtx_backend
    from gt4py.next.ffront import past_to_itir
    from gt4py.next.ffront.past_passes import linters

    default = gtx_backend.DEFAULT_TRANSFORMS
    return dataclasses.replace(
        default,
        func_to_past=ParsedPrograms(default.func_to_past),
        past_lint=linters.adapted_linter_factory(cached=False),
        past_to_itir=past_to_itir.past_to_gtir_factory(cached=False),
    )


@dataclasses.dataclass(frozen=True, eq=False)
class ParsedPrograms:
    """GT4Py's parse step (ConcreteArtifact of a DSL program -> of its PAST) behind a dict
    keyed by program_key.definition_key; a definition it cannot key goes to `parse` alone."""

    parse: Any
    parsed: dict = dataclasses.field(default_factory=dict)

    def __call__(self, inp):
        try:
            key = program_key.definition_key(inp.data)
        except program_key.NotKeyable:
            return self.parse(inp)
        past = self.parsed.get(key)
        if past is None:
            past = self.parsed[key] = self.parse(inp).data
        return dataclasses.replace(inp, data=past)


@dataclasses.dataclass(frozen=True, eq=False)
class TranslationLookup:
    """A program's translation by its key (program_key), before GT4Py lowers it."""

    store: TranslationStore
    salt: str
    compilation: CompilationStep

    def __call__(self, program, compile_time_args) -> tuple[str | None, KilnArtifact | None]:
        """The program's key (None: not keyable, never cached) and its artifact if cached."""
        try:
            key = program_key.program_key(program, compile_time_args, self.salt)
        except program_key.NotKeyable:
            return None, None
        template = self.store.get(key)
        return key, None if template is None else self.compilation(template)

    def remember(self, key: str | None, artifact: KilnArtifact) -> None:
        if key is not None:
            self.store.put(key, artifact.template)


class TranslationStore:
    """Kernel templates by key: a dict in front of one pickle file per key in `path` (None:
    memory only). A file is written whole beside its place and renamed into it, so a reader
    never sees half of one; one that cannot be read is a miss (and is rewritten).

    The files are pickles, which run code when read, so the folder is used only when this
    user or root owns it and nobody else may write to it (kiln's own cache folders are held
    to the same rule). A folder that cannot be made or written (a read-only cache shipped to compute
    nodes, a full disk) costs the translations' reuse, never the program: the store warns
    once, naming the folder and the cause, and keeps them in memory."""

    def __init__(self, path: pathlib.Path | None):
        self.path = path
        self._memory: dict[str, KernelTemplate] = {}

    def get(self, key: str) -> KernelTemplate | None:
        template = self._memory.get(key)
        if template is None and self.path is not None:
            try:
                template = pickle.loads((self.path / key).read_bytes())
            except Exception:  # noqa: BLE001: absent, damaged or foreign: a miss, rewritten after
                return None
            if not isinstance(template, KernelTemplate):
                return None
            self._memory[key] = template
        return template

    def put(self, key: str, template: KernelTemplate) -> None:
        self._memory[key] = template
        if self.path is None:
            return
        data = pickle.dumps(template, protocol=pickle.HIGHEST_PROTOCOL)
        try:
            fd, temporary = tempfile.mkstemp(dir=self.path, prefix=f".{key}.")
        except OSError as error:
            self.memory_only(f"cannot write in it ({error.strerror or error})")
            return
        try:
            with os.fdopen(fd, "wb") as file:
                file.write(data)
            os.replace(temporary, self.path / key)
        except OSError as error:
            pathlib.Path(temporary).unlink(missing_ok=True)
            self.memory_only(f"cannot write a translation to it ({error.strerror or error})")
        except BaseException:
            pathlib.Path(temporary).unlink(missing_ok=True)
            raise

    def memory_only(self, cause: str) -> None:
        warnings.warn(
            f"kiln.gt4py: translations are not kept in {self.path}: {cause}; this process keeps them in memory",
            RuntimeWarning,
            stacklevel=3,
        )
        self.path = None


def _translation_store(runtime) -> TranslationStore:
    config = runtime.config
    if config.get("cache_disable"):
        return TranslationStore(None)
    path = pathlib.Path(config["cache_dir"]) / "gt4py-translations"
    store = TranslationStore(path)
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        status = path.stat()
    except OSError as error:
        store.memory_only(f"cannot make it ({error.strerror or error})")
        return store
    if status.st_uid not in (os.geteuid(), 0) or status.st_mode & 0o022:
        store.memory_only(
            f"it is owned by uid {status.st_uid} with mode {stat.filemode(status.st_mode)}; its pickles are read only "
            f"from a folder this user (uid {os.geteuid()}) or root owns and nobody else may write to"
        )
    return store
