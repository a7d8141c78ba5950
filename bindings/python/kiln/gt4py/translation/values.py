"""The values a GT4Py stencil evaluates to while it is translated.

The translation evaluates GT4Py's iterator IR symbolically at one point of the domain: a
scalar is a piece of C++ (an expression and its type), an iterator a field (or a computed
field) and the C++ index of its position along each dimension, a lambda a closure that is
applied by inlining. Only scalars ever become code; everything else is resolved at
translation time (shifts become table reads in the index expressions).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable


@dataclasses.dataclass(frozen=True)
class Scalar:
    """A C++ expression `code` of C++ type `ctype` (double, float, int32_t, int64_t, bool)."""

    code: str
    ctype: str


@dataclasses.dataclass(frozen=True)
class FieldRef:
    """An array argument or temporary of the kernel: its C++ name, its dimensions as GT4Py
    names with their kind ('h' horizontal, 'v' vertical, 'local' a neighbour dimension)."""

    name: str
    dims: tuple[tuple[str, str], ...]
    ctype: str


@dataclasses.dataclass(frozen=True)
class Iter:
    """`field` positioned at `pos` (dimension name -> C++ index); `valid` are the C++
    conditions that every neighbour on the way exists (tables that may hold -1)."""

    field: FieldRef
    pos: tuple[tuple[str, str], ...]
    valid: tuple[str, ...] = ()

    def at(self, dim: str) -> str | None:
        return dict(self.pos).get(dim)


@dataclasses.dataclass(frozen=True)
class IndexIter:
    """GT4Py's `index(dim)`: dereferenced, the position along `dim` itself."""

    dim: str
    pos: tuple[tuple[str, str], ...]


@dataclasses.dataclass(frozen=True)
class Lifted:
    """A field computed by a stencil that was not fused into its reader: dereferencing it
    applies the stencil to its (shifted) arguments."""

    stencil: Any  # a Closure
    args: tuple


@dataclasses.dataclass(frozen=True, eq=False)
class Closure:
    """A lambda and the values its free names had where it was made. Two closures of one
    lambda over equal values are equal (a key of the evaluator's memo: a field operator
    applied twice to the same fields computes once)."""

    params: tuple[str, ...]
    body: Any  # itir.Expr
    env: dict

    def key(self) -> tuple:
        cached = self.__dict__.get("_key")
        if cached is None:
            free = symbol_refs(self.body)
            captured = tuple((name, self.env[name]) for name in sorted(free) if name in self.env)
            cached = (id(self.body), self.params, captured)
            object.__setattr__(self, "_key", cached)
        return cached

    def __eq__(self, other):
        return isinstance(other, Closure) and self.body is other.body and self.key() == other.key()

    def __hash__(self):
        return hash(self.key())


_SYMBOL_REFS: dict[int, tuple[Any, frozenset]] = {}


def symbol_refs(node) -> frozenset:
    """The names a node refers to (kept per node: the node, so a reused id is not mistaken)."""
    entry = _SYMBOL_REFS.get(id(node))
    if entry is None or entry[0] is not node:
        from gt4py.next.iterator import ir as itir

        names = frozenset(str(n.id) for n in node.pre_walk_values().if_isinstance(itir.SymRef))
        entry = _SYMBOL_REFS[id(node)] = (node, names)
    return entry[1]


@dataclasses.dataclass(frozen=True)
class Builtin:
    """A GT4Py builtin, possibly with curried arguments (`shift(C2E, 0)`, `as_fieldop(f, d)`)."""

    name: str
    curried: tuple = ()


@dataclasses.dataclass(frozen=True)
class Offset:
    """An offset literal: a tag (connectivity name, or ('cartesian', dim)) or an amount (an
    int or a Scalar for a dynamic offset)."""

    value: Any


@dataclasses.dataclass(frozen=True)
class Tuple:
    items: tuple


@dataclasses.dataclass(frozen=True)
class List:
    """A neighbour list: `length` elements, `item(i)` builds element i (an int), `valid(i)`
    the C++ conditions that element i exists (its table entry is not -1)."""

    length: int
    item: Callable[[int], Any]
    valid: Callable[[int], list] = lambda i: []


@dataclasses.dataclass(frozen=True)
class Scan:
    """`as_fieldop(scan(f, forward, init), domain)(args)`: only a statement may hold one."""

    pass_: Any  # Closure
    forward: bool
    init: Any
    args: tuple


@dataclasses.dataclass(frozen=True)
class Select:
    """A field chosen by a scalar condition (`if_` on fields): dereferenced, the condition
    picks the branch's value (each branch's reads stay inside its branch)."""

    condition: Scalar
    then: Any
    otherwise: Any


@dataclasses.dataclass(frozen=True, eq=False)
class ConcatWhere:
    """GT4Py's `concat_where(domain condition, a, b)`: the condition on the position (an IR
    node read with the dimensions' indices at `pos`), evaluated where it is dereferenced."""

    condition: Any  # itir.Expr
    env: dict
    then: Any
    otherwise: Any
    pos: tuple[tuple[str, str], ...]


@dataclasses.dataclass(frozen=True)
class Projected:
    """Element `index` of a field whose values are tuples."""

    whole: Any
    index: int
