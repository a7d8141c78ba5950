"""GT4Py programs on kiln: a GT4Py backend that translates each program into a kiln kernel.

    import kiln.gt4py
    backend = kiln.gt4py.backend(threads=2)              # kiln.Runtime's settings
    my_program.with_backend(backend)(*fields, offset_provider=grid.connectivities)
    # icon4py: any `backend=` argument takes it as it is

A construct the translation does not handle raises kiln.gt4py.UnsupportedConstruct (a
kiln.Error) at translation, naming the program and the construct. Importing this package
imports neither GT4Py nor icon4py: `backend()` does (GT4Py only). A program's kernel compiles
for a GPU without one (NVRTC, hipRTC) through `compile_for_gpu`. See docs/manual/gt4py.md.
"""

from .errors import UnsupportedConstruct
from .gpu import compile_for_gpu

__all__ = ["UnsupportedConstruct", "backend", "compile_for_gpu"]


def backend(**settings):
    """A GT4Py `Backend` running programs through kiln.

    Keyword arguments are kiln.Runtime's settings (cache_dir, threads, check, target_cpu, ...)
    plus the backend's own options:
      mode="specialised" | "generic"   kiln's Mode for every kernel;
      run_time="horizontal"            domain bounds read at run time, not compiled in:
                                       "horizontal" (default), "all", "none", or a list of
                                       program parameter names;
      gt4py_transforms="fallback"      translate GT4Py's IR as its front end lowers it, and
                                       after GT4Py's own transforms only if that is refused;
                                       "always" (GT4Py's transforms first: temporaries) or
                                       "never";
      comm=None                        an mpi4py communicator (MPI.COMM_WORLD): each program's
                                       kernel is resolved collectively over its ranks, compiled
                                       by one rank per distinct specialisation; every rank then
                                       makes the same first calls in the same order
                                       (docs/manual/gt4py.md, "On many ranks").
    """
    from .toolchain import make_backend

    return make_backend(**settings)
