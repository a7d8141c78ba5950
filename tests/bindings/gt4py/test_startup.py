"""A warm process takes its translations from the cache without lowering or translating again,
and the cache's key (kiln.gt4py.program_key) never gives a changed program a stale one.

The cross-process tests run a small program in new Python processes sharing one kiln cache,
each printing how often GT4Py lowered (past_to_gtir) and kiln translated, and the result.
"""

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

gtx = pytest.importorskip("gt4py.next")

from kiln.gt4py import program_key  # noqa: E402

PROGRAM = """
import gt4py.next as gtx
from gt4py.next import neighbor_sum
import constants

Cell = gtx.Dimension("Cell")
Edge = gtx.Dimension("Edge")
K = gtx.Dimension("K", kind=gtx.DimensionKind.VERTICAL)
C2EDim = gtx.Dimension("C2E", kind=gtx.DimensionKind.LOCAL)
C2E = gtx.FieldOffset("C2E", source=Edge, target=(Cell, C2EDim))


@gtx.field_operator
def _summed(e: gtx.Field[gtx.Dims[Edge, K], constants.DTYPE]) -> gtx.Field[gtx.Dims[Cell, K], constants.DTYPE]:
    return neighbor_sum(e(C2E), axis=C2EDim) {op} 2.0


@gtx.program
def summed(e: gtx.Field[gtx.Dims[Edge, K], constants.DTYPE], out: gtx.Field[gtx.Dims[Cell, K], constants.DTYPE]):
    _summed(e, out=out)
"""

CONSTANTS = """
import gt4py.next as gtx
DTYPE = gtx.float64
"""

# Runs `summed` once per table width given, each with a new offset provider object (a new
# GT4Py variant); prints the counts and whether every result matched NumPy's.
CHILD = """
import json, os, sys
import numpy as np
sys.path.insert(0, sys.argv[1])
from gt4py.next.ffront import past_to_itir
import kiln.gt4py
from kiln.gt4py import translation

counts = {"lowerings": 0, "translations": 0}
def counted(function, name):
    def call(*args, **kwargs):
        counts[name] += 1
        return function(*args, **kwargs)
    return call
past_to_itir.past_to_gtir = counted(past_to_itir.past_to_gtir, "lowerings")
translation.TranslationStep.__call__ = counted(translation.TranslationStep.__call__, "translations")

import gt4py.next as gtx
import constants, program
backend = kiln.gt4py.backend(cache_dir=sys.argv[2], log_level="off")
run = program.summed.with_backend(backend)
rng = np.random.default_rng(0)
matched = []
for rows, width in json.loads(sys.argv[3]):
    c2e = rng.integers(0, 7, (rows, width)).astype(np.int32)
    e = rng.random((7, 3))
    out = gtx.zeros(gtx.domain({program.Cell: rows, program.K: 3}), dtype=np.float64)
    provider = {"C2E": gtx.as_connectivity([program.Cell, program.C2EDim], codomain=program.Edge, data=c2e)}
    run(gtx.as_field([program.Edge, program.K], e), out, offset_provider=provider)
    want = e[c2e].sum(axis=1) {op} 2.0
    matched.append(bool(np.allclose(out.asnumpy(), want, rtol=1e-12)))
print(json.dumps(counts | {"matched": matched}))
"""


def write_program(folder, op="*"):
    (folder / "program.py").write_text(PROGRAM.format(op=op))
    (folder / "constants.py").write_text(CONSTANTS)


def run_child(folder, cache, calls, op="*"):
    """A new process running `summed` for each (rows, neighbours) in calls: its counts."""
    script = folder / "child.py"
    script.write_text(CHILD.replace("{op}", op))
    env = dict(os.environ, GT4PY_BUILD_JOBS="0", PYTHONDONTWRITEBYTECODE="1")
    done = subprocess.run([sys.executable, "-O", str(script), str(folder), str(cache), json.dumps(calls)],
                          env=env, capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_warm_process_neither_lowers_nor_translates_and_an_edited_program_translates_again(tmp_path):
    folder, cache = tmp_path / "src", tmp_path / "cache"
    folder.mkdir()
    write_program(folder)
    cold = run_child(folder, cache, [[5, 3]])
    assert cold == {"lowerings": 1, "translations": 1, "matched": [True]}
    # Warm: the same program, then a second variant (a new table object with more rows: same
    # type), then a table of 4 neighbours per cell (another type: translated once).
    warm = run_child(folder, cache, [[5, 3], [9, 3], [5, 4]])
    assert warm == {"lowerings": 1, "translations": 1, "matched": [True, True, True]}
    write_program(folder, op="-")  # the program edited between two processes
    edited = run_child(folder, cache, [[5, 3], [5, 4]], op="-")
    assert edited == {"lowerings": 2, "translations": 2, "matched": [True, True]}
    again = run_child(folder, cache, [[5, 3], [5, 4]], op="-")
    assert again == {"lowerings": 0, "translations": 0, "matched": [True, True]}


# ---- the key in one process -----------------------------------------------------------------


@pytest.fixture
def program_module(tmp_path, monkeypatch):
    write_program(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("program", "constants"):
        sys.modules.pop(name, None)
    import program

    yield program
    for name in ("program", "constants"):
        sys.modules.pop(name, None)


def connectivity(program, rows=5, width=3, skip=None):
    c2e = np.zeros((rows, width), np.int32)
    return gtx.as_connectivity([program.Cell, program.C2EDim], codomain=program.Edge, data=c2e, skip_value=skip)


def key(program, dtype=gtx.float64, rows=5, width=3, skip=None, provider=None):
    from gt4py.next.otf import arguments
    from gt4py.next.type_system import type_translation

    provider = provider or {"C2E": connectivity(program, rows, width, skip)}
    field = gtx.zeros(gtx.domain({program.Edge: 7, program.K: 3}), dtype=dtype)
    types = tuple(type_translation.from_value(f) for f in (field, field))
    args = arguments.CompileTimeArgs(offset_provider=provider, column_axis=None, args=types, kwargs={},
                                     argument_descriptor_contexts={})  # fmt: skip
    return program_key.program_key(program.summed.definition_stage, args, "test")


def test_the_key_follows_argument_types_tables_and_named_values(program_module):
    base = key(program_module)
    assert key(program_module) == base
    assert key(program_module, rows=50) == base  # extents are relative: one translation
    assert key(program_module, dtype=gtx.float32) != base
    assert key(program_module, width=4) != base
    assert key(program_module, skip=-1) != base
    offset = program_module.C2E  # a value the field operator names: same source, new value
    program_module.C2E = gtx.FieldOffset("C2E", source=program_module.Cell, target=(program_module.Cell, program_module.C2EDim))
    assert key(program_module) != base
    program_module.C2E = offset
    assert key(program_module) == base
    program_module.constants.DTYPE = gtx.float32  # named by the annotations, in another module
    assert key(program_module) != base


def test_a_value_the_key_cannot_write_out_is_refused(program_module):
    program_module.C2E = object()  # no content to key on: never cached rather than stale
    with pytest.raises(program_key.NotKeyable, match="object"):
        key(program_module)


def test_a_tables_type_is_kept_by_what_it_follows_from(program_module):
    """The offset provider's entries are written once per process for equal tables (a new object
    for the same grid: one key, the key computed afresh); a table of another width, dtype or
    skip value is not taken for a kept one."""
    base = key(program_module)
    assert key(program_module, rows=9) == base  # from the kept entry: rows are not in the type
    program_key._ENTRIES.clear()
    assert key(program_module) == base  # afresh
    others = [key(program_module, width=4), key(program_module, skip=-1), key(program_module, dtype=gtx.float32)]
    program_key._ENTRIES.clear()
    assert others == [key(program_module, width=4), key(program_module, skip=-1), key(program_module, dtype=gtx.float32)]
    assert base not in others


def test_a_pickled_template_renders_the_text_of_the_translated_one():
    """A template keeps its body finished for starts at 0, made when it is built and pickled
    with it: what it renders is what the placeholders finished at the call give."""
    import pickle

    from kiln.gt4py.call import Bounds
    from kiln.gt4py.translation.template import ArrayDecl, KernelTemplate

    dims = (("Cell", "h"), ("K", "v"))
    template = KernelTemplate(
        program="p", arrays=(ArrayDecl("a", "double", dims, position=0), ArrayDecl("b", "double", dims, position=1)),
        scalars=(), params=(("horizontal_start", 2), ("horizontal_end", 3)),
        horizontal_params=("horizontal_start", "horizontal_end"),
        sizes=(("cells", ("horizontal_start", "horizontal_end")), ("levels", None)), vertical_base="a",
        temporaries=(), body="a(h_@-a:0@, k_@-a:1@) = b(h_@-b:0@, k_@-b:1@) + @^b:1@ + @$b:1@;",
    )  # fmt: skip
    again = pickle.loads(pickle.dumps(template))
    shapes = {"a": (5, 4), "b": (5, 5)}
    zero, shifted = {"a": (0, 0), "b": (0, 0)}, {"a": (0, 0), "b": (0, 3)}
    for starts in (zero, shifted):
        assert again.render(shapes, starts) == template.render(shapes, starts)
    text = again.render(shapes, zero)[1]
    assert "#pragma kiln array double b[cells][levels + 1]\n" in text
    assert text.endswith("a(h_, k_) = b(h_, k_) + 0 + 5;")
    assert again.render(shapes, shifted)[1].endswith("a(h_, k_) = b(h_, k_ - b_start1_) + b_start1_ + (b_start1_ + 5);")
    bounds = Bounds(again, shapes, zero, {"horizontal_start": 1, "horizontal_end": 4})
    assert bounds.value("horizontal_end") == 4
    for _ in range(2):  # compiled, then the compiled bound again
        assert bounds.value("kiln::min<kiln::index_t>(horizontal_end, @$b:1@) - horizontal_start") == 3
