"""A translated program: kiln kernel text that waits for its array extents.

GT4Py knows a program's types before its first call, not its fields' sizes, so the text is
finished at the first call of each shape signature: every extent is written relative to the
size it indexes (`levels + 1` for a half-level field), so one text serves every grid whose
fields relate the same way, and kiln checks every call against it.

Nor does it know where each field's domain starts (`gtx.domain({Cell: (3, 40)})`). The text
indexes points as GT4Py numbers them, and every array read or write subtracts the array's
start: `a(h_@-a:0@, k_@-a:1@)`, finished at the call to `a(h_, k_)` where the start is 0 and
to `a(h_ - a_start0_, k_)` where it is not, `a_start0_` then being a domain parameter
(compiled in, or read at run time by the backend's `run_time` choice). A loop walks its first
output's own indices (`hr_`), from which the point follows (`h_ = hr_@+out:0@`), so that a
helper walking a temporary clips it in the temporary's own frame.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re

SIZE_NAMES = {"Cell": "cells", "Edge": "edges", "Vertex": "vertices", "K": "levels"}


def size_name(dim: str) -> str:
    return SIZE_NAMES.get(dim) or f"n_{dim.lower()}"


@dataclasses.dataclass(frozen=True)
class ArrayDecl:
    """A kernel array: a program field (`position` in the call's arguments) or a
    connectivity table (`table`: the offset's name). `dims`: (dimension, kind) pairs, kind
    'h', 'v' or 'local'. `indexes`: (size, may hold -1) for a table."""

    name: str
    ctype: str
    dims: tuple[tuple[str, str], ...]
    position: int = -1
    table: str = ""
    indexes: tuple[str, bool] | None = None
    written: bool = False  # an output of the program


@dataclasses.dataclass(frozen=True)
class ScalarDecl:
    name: str
    ctype: str
    position: int


@dataclasses.dataclass(frozen=True)
class TemporaryDecl:
    """A field the program computes and reads again: kiln memory laid out as `like`."""

    name: str
    ctype: str
    like: str
    rank: int
    ends: tuple[tuple[int, str], ...]  # (dimension index, end bound as an expression of the parameters)


@dataclasses.dataclass(frozen=True)
class KernelTemplate:
    program: str
    arrays: tuple[ArrayDecl, ...]
    scalars: tuple[ScalarDecl, ...]
    params: tuple[tuple[str, int], ...]  # domain parameters: name, position in the call's arguments
    horizontal_params: tuple[str, ...]  # those that bound a horizontal range
    sizes: tuple[tuple[str, tuple[str, str] | None], ...]  # size name, the range it contains
    vertical_base: str  # the array whose vertical extent is the size `levels`
    temporaries: tuple[TemporaryDecl, ...]
    body: str
    same_shapes: tuple[tuple[str, ...], ...] = ()  # arrays one loop writes over one's domain
    # What each loop writes, and reads at every point: (array or temporary, dimension index,
    # start, end as GT4Py numbers points, 'written' or 'read'); checked at the call where
    # starts are not 0 (kiln's `contains` checks take domains from 0).
    spans: tuple[tuple[str, int, str, str, str], ...] = ()

    def __post_init__(self):
        # The body as a call where every array starts at 0 (the usual one) finishes it, made
        # once here and pickled with the template: a warm process's first call finishes
        # only the extents (the placeholders' substitutions took 0.05-0.4 ms of it).
        object.__setattr__(self, "_body_from_zero", _from_zero(self.body))
        object.__setattr__(self, "_sizes", _sizes(self))

    def body_from_zero(self) -> str:
        """`with_starts(body, ...)` for starts that are all 0."""
        body = self.__dict__.get("_body_from_zero")
        if body is None:  # a template unpickled without it
            body = _from_zero(self.body)
            object.__setattr__(self, "_body_from_zero", body)
        return body

    def start_params(self, starts: dict[str, tuple[int, ...]]) -> dict[str, tuple[str | None, ...]]:
        """Each array's and temporary's start parameter per dimension (None where it starts
        at 0), from the starts of one call's arrays; a temporary starts where its array does."""
        params = {
            name: tuple(f"{name}_start{d}_" if start else None for d, start in enumerate(values))
            for name, values in starts.items()
        }
        for temporary in self.temporaries:
            params[temporary.name] = params[temporary.like]
        return params

    def start_values(self, starts: dict[str, tuple[int, ...]]) -> dict[str, int]:
        """The start parameters' values (those not 0)."""
        return {
            f"{name}_start{d}_": int(start) for name, values in starts.items() for d, start in enumerate(values) if start
        }

    def sizes_of(self) -> tuple[tuple[str, tuple[str | None, ...]], ...]:
        """Each array's name and the size each of its dimensions indexes (None: a neighbour
        dimension), the vertical base's first."""
        sizes = self.__dict__.get("_sizes")
        if sizes is None:  # a template unpickled without them
            sizes = _sizes(self)
            object.__setattr__(self, "_sizes", sizes)
        return sizes

    def extents(self, shapes: dict[str, tuple[int, ...]]) -> dict[str, list[str]]:
        """Each array's extents as kiln writes them, from the shapes of one call."""
        sizes = self.sizes_of()
        base: dict[str, int] = {}
        for name, of in sizes:
            for size, extent in zip(of, shapes[name]):
                if size is not None and size not in base:
                    base[size] = extent
        result = {}
        for name, of in sizes:
            written = []
            for size, extent in zip(of, shapes[name]):
                if size is None:
                    written.append(str(extent))
                    continue
                delta = extent - base[size]
                written.append(size if delta == 0 else f"{size} {'+' if delta > 0 else '-'} {abs(delta)}")
            result[name] = written
        return result

    def render(self, shapes: dict[str, tuple[int, ...]], starts: dict[str, tuple[int, ...]] | None = None) -> tuple[str, str]:
        """(kernel name, kernel text) for arrays of these shapes and domain starts (all 0
        when None). The text depends on which starts are 0, not on their values."""
        extents = self.extents(shapes)
        params_of = self.start_params(starts or {})
        start_params = [p for array in self.arrays for p in params_of.get(array.name, ()) if p]
        # Sizes some array of which does not start at 0: kiln's checks of a domain range
        # against such a size (`contains`) and of table entries against it (`indexes`, in
        # check mode) would take GT4Py's numbers for indices; the call checks the writes instead.
        shifted = {
            size_name(dim) for array in self.arrays for (dim, kind), p in zip(array.dims, params_of.get(array.name, ())) if p
        }
        lines = []
        for array in self.arrays:
            decl = f"#pragma kiln array {KILN_TYPE[array.ctype]} {array.name}" + "".join(
                f"[{e}]" for e in extents[array.name]
            )
            if array.indexes and array.indexes[0] not in shifted:
                size, may_skip = array.indexes
                decl += f" indexes {size}" + (" or -1" if may_skip else "")
            lines.append(decl)
        lines += [f"#pragma kiln scalar {KILN_TYPE[s.ctype]} {s.name}" for s in self.scalars]
        if self.params or start_params:
            lines.append("#pragma kiln domain " + " ".join([name for name, _ in self.params] + start_params))
        used = {size for _, of in self.sizes_of() for size in of if size is not None}
        used |= {a.indexes[0] for a in self.arrays if a.indexes and a.indexes[0] not in shifted}
        for size, contains in self.sizes:
            if size in used:
                contains = contains if size not in shifted else None
                lines.append(f"#pragma kiln size {size}" + (f" contains {contains[0]} {contains[1]}" if contains else ""))
        lines += [f"#pragma kiln temporary {KILN_TYPE[t.ctype]} {t.name}[{t.rank}] like {t.like}" for t in self.temporaries]
        body = with_starts(self.body, params_of) if start_params else self.body_from_zero()
        text = "\n".join(lines) + "\n\n" + with_extents(body, shapes)
        digest = hashlib.sha256(text.encode()).hexdigest()[:12]
        name = f"{self.program}_{digest}"
        header = f"// GT4Py program '{self.program}', translated by kiln.gt4py\n#pragma kiln kernel {name}\n"
        return name, header + text


def _sizes(template: KernelTemplate) -> tuple[tuple[str, tuple[str | None, ...]], ...]:
    order = sorted(template.arrays, key=lambda a: a.name != template.vertical_base)
    return tuple((a.name, tuple(None if kind == "local" else size_name(dim) for dim, kind in a.dims)) for a in order)


def indexed(name: str, dims, indices) -> str:
    """`name(indices)` with the array's start subtracted along each dimension that is not a
    neighbour dimension (placeholders that `with_starts` finishes)."""
    parts = [
        index if kind == "local" else f"{paren(index)}@-{name}:{d}@"
        for d, ((_, kind), index) in enumerate(zip(dims, indices))
    ]
    return f"{name}({', '.join(parts)})"


def paren(code: str) -> str:
    """An index as the left operand of a subtraction (a conditional would bind looser)."""
    return f"({code})" if "?" in code else code


def with_starts(code: str, params_of: dict[str, tuple[str | None, ...]]) -> str:
    """The start placeholders finished: `@-a:0@` (subtract a's start along dimension 0) and
    `@+a:0@` (add it) vanish where a starts at 0, else name its start parameter; `@^a:0@`
    (a's first index, as GT4Py numbers it) is 0 or the parameter; `@$a:0@` (one past its
    last) is its extent, plus the parameter."""

    if not any(param for params in params_of.values() for param in params):
        return _from_zero(code)

    def finish(match) -> str:
        sign, name, d = match.group(1), match.group(2), int(match.group(3))
        param = params_of.get(name, ())[d] if d < len(params_of.get(name, ())) else None
        if sign in "+-":
            return f" {sign} {param}" if param else ""
        if sign == "^":
            return param or "0"
        return f"({param} + @{name}:{d}@)" if param else f"@{name}:{d}@"

    return _PLACEHOLDERS.sub(finish, code)


def _from_zero(code: str) -> str:
    """with_starts where every array starts at 0 (the usual call): the same result without a
    Python call per placeholder (0.7 ms of the w program's warm first call went to them)."""
    code = _ZERO_SHIFTS.sub("", code)
    code = _ZERO_FIRSTS.sub("0", code)
    return _ZERO_LASTS.sub(r"@\1@", code)


# Compiled here, at import, not at a process's first call (re's cache would compile them then).
_PLACEHOLDERS = re.compile(r"@([-+^$])(\w+):(\d+)@")
_EXTENTS = re.compile(r"@(\w+):(\d+)@")
_ZERO_SHIFTS = re.compile(r"@[-+]\w+:\d+@")
_ZERO_FIRSTS = re.compile(r"@\^\w+:\d+@")
_ZERO_LASTS = re.compile(r"@\$(\w+:\d+)@")


def with_extents(code: str, shapes: dict[str, tuple[int, ...]]) -> str:
    """`@name:dim@` (a field's extent in a domain bound) replaced by the call's extent."""
    return _EXTENTS.sub(lambda m: str(shapes[m.group(1)][int(m.group(2))]), code)


def python_bound(code: str) -> str:
    """A bound's C++ as Python: kiln::min<kiln::index_t>(a, b) -> min(a, b)."""
    return code.replace("kiln::min<kiln::index_t>", "min").replace("kiln::max<kiln::index_t>", "max")


# A bool field is a kiln bool array: NumPy's bool_ and C++'s bool are one byte each.
KILN_TYPE = {"double": "double", "float": "float", "int32_t": "int32", "int64_t": "int64", "bool": "bool"}
