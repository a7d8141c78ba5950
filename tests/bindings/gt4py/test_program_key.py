"""The translation key writes a typing alias of library types, and a library's class, once per
process and replays it after (program_key._FIXED): the replayed key is the key written afresh,
and an alias that names a user's class is walked every time, so that rebinding what the class
holds still changes the key. A definition's walk is replayed from its journal (below) only while
every read it made gives the same object."""

import dataclasses
import os
import sys
import typing

import pytest

gtx = pytest.importorskip("gt4py.next")

from kiln.gt4py import program_key  # noqa: E402

import programs as P  # noqa: E402


def written(value, names=frozenset()) -> list[str]:
    writer = program_key._Writer()
    writer.value(value, names)
    return writer.parts


def test_a_replayed_alias_writes_what_it_wrote_afresh():
    alias = gtx.Field[gtx.Dims[P.Cell, P.K], gtx.float64]
    program_key._FIXED.clear()
    fresh = written(alias)
    assert id(alias) in program_key._FIXED
    assert written(alias) == fresh
    assert written(P.pointwise.definition_stage) == written(P.pointwise.definition_stage)
    program_key._FIXED.clear()
    assert written(alias) == fresh


class Holder:
    value = 1


def test_an_alias_naming_a_users_class_is_walked_every_time():
    alias = tuple[Holder, gtx.float64]
    first = written(alias, frozenset({"value"}))
    assert id(alias) not in program_key._FIXED
    Holder.value = 2
    try:
        assert written(alias, frozenset({"value"})) != first
    finally:
        Holder.value = 1
    assert written(typing.Optional[int]) == written(typing.Optional[int])


# ---- the journal: a definition's walk replayed while what it read holds -----------------------
# `definition_key` (GT4Py's parse, at `with_backend`) walks a definition and journals its reads;
# `program_key` at the first call replays the journal instead of walking again. A replay must give
# what a fresh walk gives, and any change to what the walk read must give a new digest.

SCALE = 2.0
TABLE = [1, 2]
WEIGHTS = {"a": 1.0}


@dataclasses.dataclass(frozen=True)
class Settings:
    factor: float


SETTINGS = Settings(1.0)
K = P.K


def _uses_globals(x, y=SCALE):
    return x * SCALE + TABLE[0] + WEIGHTS["a"] + SETTINGS.factor + abs(y) + P.K.value.count("K")


def _closing_over(value):
    def inner(x):
        return x + value

    return inner


def replayed_and_fresh(definition) -> tuple[bytes, bytes]:
    """The digest as a second key computes it (the journal replayed, or a walk where it no longer
    holds), then as a fresh walk computes it (no journal)."""
    replayed = program_key._definition_digest(definition)
    program_key._DEFINITIONS.pop(id(definition), None)
    return replayed, program_key._definition_digest(definition)


def test_a_replayed_walk_gives_a_fresh_walks_digest():
    program_key._DEFINITIONS.clear()
    first = program_key._definition_digest(_uses_globals)
    assert id(_uses_globals) in program_key._DEFINITIONS  # journaled
    replayed, fresh = replayed_and_fresh(_uses_globals)
    assert replayed == fresh == first


def change(what):
    """(do, undo) of a change to something `_uses_globals`'s walk reads."""
    module = sys.modules[__name__]
    changes = {
        "a global rebound": (lambda: setattr(module, "SCALE", 3.0), lambda: setattr(module, "SCALE", 2.0)),
        "a list's item": (lambda: TABLE.__setitem__(0, 5), lambda: TABLE.__setitem__(0, 1)),
        "a dict's value": (lambda: WEIGHTS.__setitem__("a", 2.0), lambda: WEIGHTS.__setitem__("a", 1.0)),
        "a frozen dataclass's field": (lambda: object.__setattr__(SETTINGS, "factor", 2.0),
                                       lambda: object.__setattr__(SETTINGS, "factor", 1.0)),
        "a builtin shadowed by a global": (lambda: setattr(module, "abs", lambda v: v), lambda: delattr(module, "abs")),
        "a module's attribute": (lambda: setattr(P, "K", gtx.Dimension("K2", kind=gtx.DimensionKind.VERTICAL)),
                                 lambda: setattr(P, "K", K)),
        "a function's defaults": (lambda: setattr(_uses_globals, "__defaults__", (3.0,)),
                                  lambda: setattr(_uses_globals, "__defaults__", (2.0,))),
    }  # fmt: skip
    return changes[what]


@pytest.mark.parametrize(
    "what",
    ["a global rebound", "a list's item", "a dict's value", "a frozen dataclass's field",
     "a builtin shadowed by a global", "a module's attribute", "a function's defaults"],
)  # fmt: skip
def test_a_change_to_what_the_walk_read_gives_a_new_digest(what):
    do, undo = change(what)
    program_key._DEFINITIONS.clear()
    before = program_key._definition_digest(_uses_globals)
    do()
    try:
        replayed, fresh = replayed_and_fresh(_uses_globals)
        assert replayed == fresh != before
    finally:
        undo()
    program_key._DEFINITIONS.clear()
    assert program_key._definition_digest(_uses_globals) == before


def test_a_closure_cell_changed_gives_a_new_digest():
    inner = _closing_over(1.0)
    before = program_key._definition_digest(inner)
    inner.__closure__[0].cell_contents = 2.0
    replayed, fresh = replayed_and_fresh(inner)
    assert replayed == fresh != before


def test_an_edited_source_file_gives_a_new_digest(tmp_path, monkeypatch):
    source = tmp_path / "edited_module.py"
    source.write_text("def f(x):\n    return x + 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import edited_module

    try:
        before = program_key._definition_digest(edited_module.f)
        # The code object in memory is the same; the file (what GT4Py's parse reads) is not.
        source.write_text("def f(x):\n    return x + 2\n")
        stamp = source.stat()
        os.utime(source, ns=(stamp.st_atime_ns, stamp.st_mtime_ns + 1_000_000_000))
        replayed, fresh = replayed_and_fresh(edited_module.f)
        assert replayed == fresh != before
    finally:
        sys.modules.pop("edited_module", None)


# ---- the offset provider: a connectivity's type written from its fields -----------------------
# program_key._connectivity_parts writes what the generic walk of GT4Py's own type
# (common.offset_provider_to_type) writes, without building it: the parts must be the walk's for
# every connectivity kind GT4Py has, and any field of the type that differs must change them.

import numpy as np  # noqa: E402
from gt4py.next import common  # noqa: E402

from kiln.gt4py import grids  # noqa: E402


def walked(name, entry) -> list[str]:
    """What the key wrote for an entry before the direct writer: the walk of GT4Py's type."""
    return written(common.offset_provider_to_type({name: entry})[name])


def _providers():
    from icon4py.model.common.grid import simple

    for grid in (grids.torus(8, 6, 3), grids.limited_area(8, 6, 3), grids.simple_grid(3)):
        yield grid.name, grid.connectivities()
        if grid.limited_area:
            yield grid.name + " (skip values replaced)", grid.connectivities(replace_skip_values=True)
    yield "icon4py SimpleGrid's own", dict(simple.simple_grid(num_levels=3).connectivities)


@pytest.mark.parametrize("label, provider", list(_providers()), ids=lambda v: v if isinstance(v, str) else "")
def test_a_grids_connectivities_write_what_the_walk_of_their_type_writes(label, provider):
    assert provider
    for name, entry in provider.items():
        direct = program_key._connectivity_parts(entry)
        assert direct is not None, (label, name, type(entry))
        assert direct == walked(name, entry), (label, name)


VERTEX = common.Dimension("Vertex")


def _table(width=3, dtype=np.int32, skip_value=None, source=P.Cell, target=P.Edge, local=None):
    local = local or common.Dimension(f"C2E{width}", common.DimensionKind.LOCAL)
    table = np.arange(4 * width, dtype=dtype).reshape(4, width) % 5
    return common._connectivity(table, codomain=target, domain={source: 4, local: width}, skip_value=skip_value)


def test_cartesian_and_other_tables_write_what_the_walk_writes():
    entries = {
        "translation": common.CartesianConnectivity.for_translation(P.K, 1),
        "relocation": common.CartesianConnectivity.for_relocation(P.K, common.Dimension("K2")),
        "int64": _table(dtype=np.int64),
        "skip": _table(skip_value=-1),
        "numpy skip": _table(skip_value=np.int32(-1)),
        "wide": _table(width=6),
        # a 2-d table whose second dimension is not local: a ConnectivityType, no width
        "not a neighbour table": _table(local=common.Dimension("Other")),
    }
    for name, entry in entries.items():
        assert program_key._connectivity_parts(entry) == walked(name, entry), name


def test_each_field_of_a_connectivitys_type_changes_its_parts():
    variants = [
        _table(),
        _table(width=4, local=common.Dimension("C2E3", common.DimensionKind.LOCAL)),  # only the width
        _table(dtype=np.int64),
        _table(skip_value=-1),
        _table(skip_value=np.int32(-1)),  # equal to -1, but GT4Py's type writes its class too
        _table(skip_value=-2),
        _table(target=VERTEX),
        _table(source=VERTEX),
        _table(local=common.Dimension("C2E3", common.DimensionKind.HORIZONTAL)),
    ]
    direct = [tuple(program_key._connectivity_parts(entry)) for entry in variants]
    assert len(set(direct)) == len(direct)
    parts = [tuple(program_key._provider_parts({"C2E": entry})) for entry in variants]  # memo by stamp
    assert len(set(parts)) == len(parts)
    assert parts[0] == tuple(program_key._provider_parts({"C2E": _table()}))  # another table, same type


class _OwnType(type(_table())):
    """A connectivity whose type is its own: the generic walk writes it."""

    def __gt_type__(self):
        return common.ConnectivityType(domain=self.domain.dims, codomain=self.codomain, skip_value=None, dtype=self.dtype)


def test_a_connectivity_with_a_type_of_its_own_is_walked_generically():
    base = _table()
    own = _OwnType(base.domain, base.ndarray, base.codomain, _skip_value=None)
    assert program_key._connectivity_parts(own) is None
    parts = program_key._provider_parts({"C2E": own})
    assert parts[2:-1] == walked("C2E", own)
    assert parts != program_key._provider_parts({"C2E": base})
