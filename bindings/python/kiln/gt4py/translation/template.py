"""A translated program: kiln kernel text that waits for its array extents.

GT4Py knows a program's types before its first call, not its fields' sizes, so the text is
finished at the first call of each shape signature: every extent is written relative to the
size it indexes (`levels + 1` for a half-level field), so one text serves every grid whose
fields relate the same way, and kiln checks every call against it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re

SIZE_NAMES = {"Cell": "cells", "Edge": "edges", "Vertex": "vertices", "K": "levels"}


def size_name(dim: str) -> str:
    return SIZE_NAMES.get(dim, f"n_{dim.lower()}")


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

    def extents(self, shapes: dict[str, tuple[int, ...]]) -> dict[str, list[str]]:
        """Each array's extents as kiln writes them, from the shapes of one call."""
        base: dict[str, int] = {}
        order = sorted(self.arrays, key=lambda a: a.name != self.vertical_base)
        for array in order:
            for (dim, kind), extent in zip(array.dims, shapes[array.name]):
                if kind != "local":
                    base.setdefault(size_name(dim), extent)
        result = {}
        for array in self.arrays:
            written = []
            for (dim, kind), extent in zip(array.dims, shapes[array.name]):
                if kind == "local":
                    written.append(str(extent))
                    continue
                size = size_name(dim)
                delta = extent - base[size]
                written.append(size if delta == 0 else f"{size} {'+' if delta > 0 else '-'} {abs(delta)}")
            result[array.name] = written
        return result

    def render(self, shapes: dict[str, tuple[int, ...]]) -> tuple[str, str]:
        """(kernel name, kernel text) for arrays of these shapes."""
        extents = self.extents(shapes)
        lines = []
        for array in self.arrays:
            decl = f"#pragma kiln array {KILN_TYPE[array.ctype]} {array.name}" + "".join(
                f"[{e}]" for e in extents[array.name]
            )
            if array.indexes:
                size, may_skip = array.indexes
                decl += f" indexes {size}" + (" or -1" if may_skip else "")
            lines.append(decl)
        lines += [f"#pragma kiln scalar {KILN_TYPE[s.ctype]} {s.name}" for s in self.scalars]
        if self.params:
            lines.append("#pragma kiln domain " + " ".join(name for name, _ in self.params))
        used = {size_name(dim) for a in self.arrays for dim, kind in a.dims if kind != "local"}
        used |= {a.indexes[0] for a in self.arrays if a.indexes}
        for size, contains in self.sizes:
            if size in used:
                lines.append(f"#pragma kiln size {size}" + (f" contains {contains[0]} {contains[1]}" if contains else ""))
        lines += [f"#pragma kiln temporary {KILN_TYPE[t.ctype]} {t.name}[{t.rank}] like {t.like}" for t in self.temporaries]
        text = "\n".join(lines) + "\n\n" + with_extents(self.body, shapes)
        digest = hashlib.sha256(text.encode()).hexdigest()[:12]
        name = f"{self.program}_{digest}"
        header = f"// GT4Py program '{self.program}', translated by kiln.gt4py\n#pragma kiln kernel {name}\n"
        return name, header + text


def with_extents(code: str, shapes: dict[str, tuple[int, ...]]) -> str:
    """`@name:dim@` (a field's extent in a domain bound) replaced by the call's extent."""
    return re.sub(r"@(\w+):(\d+)@", lambda m: str(shapes[m.group(1)][int(m.group(2))]), code)


def python_bound(code: str) -> str:
    """A bound's C++ as Python: kiln::min<kiln::index_t>(a, b) -> min(a, b)."""
    return code.replace("kiln::min<kiln::index_t>", "min").replace("kiln::max<kiln::index_t>", "max")


# A bool field is a kiln bool array: NumPy's bool_ and C++'s bool are one byte each.
KILN_TYPE = {"double": "double", "float": "float", "int32_t": "int32", "int64_t": "int64", "bool": "bool"}
