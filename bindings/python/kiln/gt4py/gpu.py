"""A GT4Py program's kiln kernel compiled for a GPU without one: NVRTC (CUDA) or hipRTC.

kiln launches GPU kernels only from C++ (kiln::GpuKernel) and GT4Py's GPU fields are CuPy
arrays, so the Python backend runs programs on the CPU; what it can do for a GPU is what
`kiln warm` does on a login node: compile the translation's kernel for an architecture into
kiln's cache, where a GPU run finds it. The same text, the same specialisation (bounds,
extents, strides) as the CPU call of these arguments would use.
"""

from __future__ import annotations


def compile_for_gpu(
    backend, program, *args, offset_provider, arch: str = "sm_90", compiler: str = "cuda", **kwargs
) -> str:
    """Translates `program` with kiln's GT4Py `backend` (kiln.gt4py.backend()), finishes its
    kernel for `args` and `kwargs` (the fields and scalars a call would take, NumPy-backed,
    by position or by name) and compiles
    it for GPU architecture `arch` ("sm_90": a CUBIN, "compute_90": PTX, with `compiler`
    "cuda"; "gfx90a" with "hip"). Nothing runs. Returns the kernel's kiln cache key: its
    binary is the payload of the entry <cache_dir>/<key[:2]>/<key[2:]> (docs/manual/cache.md).

    Raises kiln.gt4py.UnsupportedConstruct for a program the translation refuses,
    kiln.ToolchainError when the GPU compiler cannot be loaded, kiln.CompileError with the
    compiler's log when the kernel does not compile, kiln.Error for an unknown architecture.
    """
    import inspect

    from gt4py.next.otf import arguments

    if kwargs:  # in the program's order: the translation knows its parameters by position
        names = list(inspect.signature(program.definition_stage.definition).parameters)[len(args):]
        unknown = set(kwargs) - set(names)
        if unknown:
            raise TypeError(f"kiln.gt4py.compile_for_gpu: program has no parameters {sorted(unknown)}")
        args = (*args, *(kwargs[name] for name in names if name in kwargs))
    compile_time_args = arguments.CompileTimeArgs.from_concrete(*args, offset_provider=offset_provider)
    translated = backend.compile(program.definition_stage, compile_time_args)
    return translated.precompile(args, offset_provider, arch, compiler)
