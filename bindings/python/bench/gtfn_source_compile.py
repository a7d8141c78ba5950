"""The alternative to translating GTIR: compile GT4Py's own C++ (gtfn's) with kiln's compiler.

kiln.gt4py translates a program's GTIR into kiln's kernel language. The other way in would
take the C++ that GT4Py's gtfn backend generates (gridtools' `fn` templates plus nanobind
bindings) and compile that with clang 19, the compiler kiln embeds. This script measures both
on the same programs, one process, one after the other (docs/design.md, section 7):

  gtfn C++        GT4Py's gtfn translation of the program (its transforms included), captured
                  before gtfn compiles it; size of stencil + bindings source
  g++ -O3         that source compiled as gtfn compiles it (GT4Py's flags, the object only)
  clang++-19 -O3  the same with clang 19 (kiln's compiler) and the same flags
  glue            of that, what an empty nanobind module with the same includes takes (clang)
  kiln            kiln.gt4py's first call on an empty cache: translation + kiln's compile in
                  its worker + load + one run; and the kernel text's size

Run: PYTHONPATH=build/bindings/python .venv/bin/python -O bindings/python/bench/gtfn_source_compile.py
     [--filter REGEX]   (default: three diffusion programs, small to large)
"""

from __future__ import annotations

import argparse
import os
import pathlib
import re
import shlex
import subprocess
import sys
import sysconfig
import tempfile
import time

DEFAULT = "calculate_nabla2_of_theta|apply_diffusion_to_theta_and_exner|apply_diffusion_to_vn"


class Captured(Exception):
    """Raised by the capturing compilation step: gtfn's source is in hand, nothing compiled."""

    def __init__(self, source):
        self.source = source


def gtfn_source(program, args, offset_provider):
    """gtfn's stencil and bindings source for `program`, and the seconds GT4Py took to make it."""
    import dataclasses

    from gt4py.next.program_processors.runners import gtfn

    def capture(source):
        raise Captured(source)

    backend = gtfn.run_gtfn
    executor = dataclasses.replace(backend.executor, compilation=capture)
    capturing = dataclasses.replace(backend, executor=executor)
    start = time.perf_counter()
    try:
        program.with_backend(capturing)(**args, offset_provider=offset_provider)
    except Captured as captured:
        return captured.source, time.perf_counter() - start
    raise RuntimeError(f"gtfn compiled {program.__name__} without passing through the compilation step")


def compile_seconds(compiler: str, folder: pathlib.Path, bindings: pathlib.Path) -> float:
    """One compile of gtfn's translation unit with GT4Py's own flags (the object only, no link)."""
    import gridtools_cpp
    import nanobind

    command = [
        compiler, "-O3", "-DNDEBUG", "-fPIC", "-std=c++17", "-ffunction-sections", "-fdata-sections",
        f"-I{sysconfig.get_paths()['include']}", f"-I{nanobind.include_dir()}",
        "-isystem", str(gridtools_cpp.get_include_dir()), "-c", str(bindings), "-o", str(folder / "out.o"),
    ]
    start = time.perf_counter()
    done = subprocess.run(command, cwd=folder, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{shlex.join(command)} failed:\n{done.stderr[-2000:]}")
    return time.perf_counter() - start


GLUE = """#include <nanobind/nanobind.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/optional.h>
#include <nanobind/ndarray.h>
NB_MODULE(glue, module) {}
"""


def kiln_first_call(program, args, offset_provider, cache: str) -> tuple[float, int]:
    """kiln.gt4py's first call on an empty cache, and the size of the kernel text it made."""
    import kiln.gt4py

    backend = kiln.gt4py.backend(cache_dir=cache, threads=1)
    start = time.perf_counter()
    program.with_backend(backend)(**args, offset_provider=offset_provider)
    seconds = time.perf_counter() - start
    return seconds, sum(len(text) for text in backend.kernel_sources().values())


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--filter", default=DEFAULT, help="regular expression on the diffusion programs' names")
    options = parser.parse_args(argv)

    from kiln.gt4py import bench, coverage, grids, inputs

    print(f"# {bench.machine()}; load {os.getloadavg()[0]:.1f}")
    print(f"# {bench.versions()}")
    grid = grids.make("torus", "8x8", 10)
    print("| program | gtfn C++ (KB) | GT4Py to C++ (s) | g++ -O3 (s) | clang++-19 -O3 (s) | glue (s) | kiln text (KB) | kiln first call, cold (s) |")
    print("|---|---|---|---|---|---|---|---|")
    for program_id in coverage.discover("diffusion", None):
        if not re.search(options.filter, program_id):
            continue
        program = coverage.load(program_id)
        args = inputs.program_inputs(program, grid, 1)
        offsets = grid.connectivities()
        source, to_cpp = gtfn_source(program, args, offsets)
        with tempfile.TemporaryDirectory(prefix="kiln-gtfn-source-") as folder:
            folder = pathlib.Path(folder)
            stencil = source.program_source
            # The names gtfn's bindings include and gtfn's CMake project compiles.
            (folder / f"{stencil.entry_point.name}.hpp").write_text(stencil.source_code)
            bindings = folder / f"{stencil.entry_point.name}_bindings.cpp"
            bindings.write_text(source.binding_source.source_code)
            size = len(stencil.source_code) + len(source.binding_source.source_code)
            gpp = compile_seconds("g++", folder, bindings)
            clang = compile_seconds("clang++-19", folder, bindings)
            (folder / "glue.cpp").write_text(GLUE)
            glue = compile_seconds("clang++-19", folder, folder / "glue.cpp")
            kiln_seconds, kiln_size = kiln_first_call(program, args, offsets, str(folder / "kiln-cache"))
        name = program_id.split(":")[1]
        print(f"| {name} | {size / 1024:.0f} | {to_cpp:.1f} | {gpp:.1f} | {clang:.1f} | {glue:.1f} | {kiln_size / 1024:.1f} | {kiln_seconds:.2f} |")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
