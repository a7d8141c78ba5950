"""Stencils to C++: GT4Py's iterator IR evaluated symbolically at one point of the domain.

An `Evaluator` walks an expression of the IR with an environment of values (values.py):
lambdas are inlined, shifts move an iterator's position (a connectivity shift turns the
horizontal index into a table read, `C2E(h, 0)`, and records that the neighbour exists only
where the entry is not -1), `deref` becomes an array read, `can_deref` the conjunction of
those conditions, `if_` a conditional whose branches keep their own statements, so a read
guarded by `can_deref` is never executed for a missing neighbour. A `let` (a lambda applied
to values) binds a C++ constant in the current block: shared subexpressions are computed
once, as GT4Py's common subexpression elimination meant them to be.
"""

from __future__ import annotations

import itertools
import re
from typing import Any

from . import builtins
from .template import indexed
from .values import (
    Builtin, Closure, ConcatWhere, IndexIter, Iter, Lifted, List, Offset, Projected, Scalar, Scan, Select, Tuple,
)

LAZY = {"if_", "concat_where"}
COPIED = {"double", "float", "bool"}  # scalar arguments read once per point (Evaluator._copy)
DOMAINS = {"unstructured_domain", "cartesian_domain", "named_range"}
ACCUMULATOR = re.compile(r"\bacc\d+_")  # a reduction's running value (fold): assigned per element
_NAME = re.compile(r"\b[a-z]+\d+_\b")  # a name of the translation's (Names.fresh)
_DEFINED = re.compile(r"(?:const )?\w+ ([a-z]+\d+_)(?: =|;)")  # a line that binds or declares one
_CONSTANT = re.compile(r"const (\w+) ([a-z]+\d+_) = (.*);")


class Evaluator:
    """Evaluates the expressions of one statement at its point `pos` (dimension -> C++ index).

    `program` is the ProgramTranslation: the symbols of the program (fields, scalars,
    temporaries), the offset provider's types, the tables used, `refuse`.
    """

    def __init__(self, program, pos: tuple[tuple[str, str], ...]):
        self.program = program
        self.pos = pos
        self.block: list[str] = []
        self._names = program.names
        self._axes = None  # the position whose indices AxisLiterals read (concat_where conditions)
        self.reads: set[tuple[str, tuple[str, ...]]] = set()  # (array, indices) read
        self.unconditional: set[tuple[str, tuple[str, ...]]] = set()  # those read outside any branch
        # Values of computed fields already dereferenced, one layer per open C++ block: a
        # field read twice at one point (a tuple's elements, a let read at several places) is
        # computed once, and a value computed inside a branch is reused only inside it.
        self._memo: list[dict] = [{}]
        # The conditions of the branches being evaluated, innermost last: [C++ test, its
        # value there, whether a test inside relied on it] (see _choose).
        self._known: list[list] = []
        self._retrying = False  # a branch evaluated again without knowing its condition
        self._outermost = self.block  # the statement's own block: every point runs it
        self._copies: dict[str, Scalar] = {}  # scalar arguments read, as copies made there

    # ---- expressions ------------------------------------------------------------------
    def eval(self, node, env: dict) -> Any:
        from gt4py.next.iterator import ir as itir

        if isinstance(node, itir.Literal):
            return literal(node, self.program.refuse)
        if isinstance(node, itir.InfinityLiteral):
            return Scalar("kiln::infinity()" if node.name == "POSITIVE" else "(-kiln::infinity())", "double")
        if isinstance(node, itir.SymRef):
            return self._symbol(str(node.id), env)
        if isinstance(node, itir.OffsetLiteral):
            return Offset(node.value)
        if isinstance(node, itir.CartesianOffset):
            return Offset(("cartesian", str(node.domain.value), str(node.codomain.value)))
        if isinstance(node, itir.AxisLiteral):
            if self._axes is not None:  # in a concat_where condition: the position's index
                index = dict(self._axes).get(str(node.value))
                if index is None:
                    self.program.refuse(f"a condition on {node.value} at a point without it", "")
                return Scalar(f"kiln::index_t({index})", "int64_t")
            return Offset(("axis", str(node.value)))
        if isinstance(node, itir.Lambda):
            return Closure(tuple(str(p.id) for p in node.params), node.expr, env)
        if isinstance(node, itir.FunCall):
            if isinstance(node.fun, itir.SymRef) and str(node.fun.id) in DOMAINS and str(node.fun.id) not in env:
                return Builtin("domain")  # as_fieldop's domain: the statement's loop bounds say it
            fun = self.eval(node.fun, env)
            if isinstance(fun, Builtin) and fun.name == "concat_where" and not fun.curried:
                condition, then, otherwise = node.args
                return ConcatWhere(condition, env, self.eval(then, env), self.eval(otherwise, env), self.pos)
            if isinstance(fun, Builtin) and fun.name in LAZY and not fun.curried:
                return self._if(node.args, env)
            return self.apply(fun, [self.eval(a, env) for a in node.args])
        self.program.refuse(f"the IR node '{type(node).__name__}'", str(node)[:200])

    def _symbol(self, name: str, env: dict):
        if name in env:
            return env[name]
        value = self.program.symbol(name, self.pos)
        if isinstance(value, Scalar) and self.pos and value.ctype in COPIED:
            return self._copy(value)
        return value if value is not None else Builtin(name)

    def _copy(self, argument: Scalar) -> Scalar:
        """A scalar argument, read once at the top of the statement's body.

        The loop's body reads kiln's arguments through the lambda's references: a scalar
        read inside a branch (`if (v16_) { ... thresh_tdiff - v3_ ... }`) is a load the
        vector loop may not speculate (nothing tells LLVM the reference is readable, and a
        store to an output may alias it), so it became a branch and a scalar load per lane
        (calculate_enhanced_diffusion_coefficients_for_grid_point_cold_pools, 0.56x gtfn).
        Read at the top, every point reads it and the vector loop broadcasts it. Integer
        scalars stay as they are: the loops are cut at the horizontal bounds they name
        (program.py's _horizontal_cuts, which looks for the argument's own name)."""
        copy = self._copies.get(argument.code)
        if copy is None:
            copy = self._copies[argument.code] = Scalar(self._names.fresh("s"), argument.ctype)
            self._outermost.insert(0, f"const {argument.ctype} {copy.code} = {argument.code};")
        return copy

    # ---- application ------------------------------------------------------------------
    def apply(self, fun, args: list) -> Any:
        if isinstance(fun, Closure):
            if len(args) != len(fun.params):
                self.program.refuse("a lambda applied to the wrong number of arguments", "")
            env = dict(fun.env)
            for param, value in zip(fun.params, args):
                env[param] = self.bind(value)
            return self.eval(fun.body, env)
        if isinstance(fun, Builtin):
            return self._builtin(fun, args)
        self.program.refuse("a call of a value that is not a function", repr(fun)[:200])

    def bind(self, value):
        """A let: a scalar that is more than a name or a literal becomes a C++ constant.

        One already bound to the same C++ in this block or a block around it is reused (a
        field operator's let is inlined into each of its readers, and GT4Py's branches
        repeat the same test and reads: `(current_vn(h_, k_) >= 0.0)` was bound twice in
        one branch of compute_rho_theta_pgrad_and_update_vn). The same text has the same
        value there: the names it uses are constants, the point and the arrays do not
        change before the outputs are written; a reduction's accumulator (`acc3_`), the
        one name assigned more than once, is never shared. A block's bindings are kept in
        its memo layer, so nothing bound inside a branch is used outside it."""
        if isinstance(value, Scalar) and not is_trivial(value.code):
            key = ("bound", value.code, value.ctype)
            for layer in reversed(self._memo):
                if key in layer:
                    return layer[key]
            name = self._names.fresh("v")
            self.block.append(f"const {value.ctype} {name} = {value.code};")
            bound = Scalar(name, value.ctype)
            if ACCUMULATOR.search(value.code) is None:
                self._memo[-1][key] = bound
            return bound
        if isinstance(value, Tuple):
            return Tuple(tuple(self.bind(item) for item in value.items))
        return value

    def _builtin(self, fun: Builtin, args: list):
        name, curried = fun.name, fun.curried
        if name in ("shift", "as_fieldop", "scan", "map_list", "reduce", "lift") and not curried:
            return Builtin(name, tuple(args))
        if name == "deref":
            return self.deref(args[0])
        if name == "can_deref":
            return self.can_deref(args[0])
        if name == "shift":
            return self.shift(args[0], curried)
        if name == "lift":
            return Lifted(curried[0], tuple(args))
        if name == "as_fieldop":
            stencil = curried[0]
            if isinstance(stencil, Builtin) and stencil.name == "scan":
                body, forward, init = stencil.curried
                return Scan(body, forward.code == "true", init, tuple(args))
            return Lifted(stencil, tuple(args))
        if name == "make_tuple":
            return Tuple(tuple(args))
        if name == "tuple_get":
            index, value = args
            return self.project(value, offset_amount(index, self.program))
        if name == "broadcast":
            return args[0]  # a value, field or scalar, is the same at every point
        if name == "reduce":
            op, init = curried
            return self.fold(op, init, args)
        if name == "list_get":
            index, values = args
            if not isinstance(values, List):
                self.program.refuse("'list_get' of a value that is not a neighbour list", "")
            return values.item(offset_amount(index, self.program))
        if name == "neighbors":
            offset, it = args
            n = self.program.table(offset.value).max_neighbors
            return List(
                n,
                lambda i: self.deref(self.shift(it, (offset, Offset(i)))),
                lambda i: validity(self.shift(it, (offset, Offset(i)))),
            )
        if name == "map_list":
            (op,) = curried
            n = args[0].length
            return List(
                n,
                lambda i: self.apply(op, [lst.item(i) for lst in args]),
                lambda i: [c for lst in args for c in lst.valid(i)],
            )
        if name == "cast_":
            value, target = args
            ctype = builtins.CTYPES.get(target.name) if isinstance(target, Builtin) else None
            if ctype is None:
                self.program.refuse(f"'cast_' to {target!r}", "")
            return Scalar(f"static_cast<{ctype}>({value.code})", ctype)
        if name == "index":
            (axis,) = args
            return IndexIter(axis.value[1], self.pos)
        if all(isinstance(a, Scalar) for a in args):
            result = builtins.apply(name, args, self.program.refuse)
            if result is not None:
                return result
        self.program.refuse(f"the builtin '{name}'", f"arguments {[type(a).__name__ for a in args]}")

    # ---- iterators ----------------------------------------------------------------------
    def deref(self, it):
        if isinstance(it, Scalar):
            return it
        if isinstance(it, Iter):
            return self._read(it)
        if isinstance(it, IndexIter):
            index = dict(it.pos).get(it.dim)
            if index is None:
                self.program.refuse(f"'index({it.dim})' outside a domain over {it.dim}", "")
            return Scalar(f"int32_t({index})", "int32_t")
        if isinstance(it, Tuple):
            return Tuple(tuple(self.deref(item) for item in it.items))
        if isinstance(it, (Lifted, Select, ConcatWhere, Projected)):
            for layer in reversed(self._memo):
                if it in layer:
                    return layer[it]
            value = self._compute(it)
            if all(isinstance(v, Scalar) for v in flatten(value)):
                value = self.bind(value)
                self._memo[-1][it] = value
            return value
        if isinstance(it, Scan):
            self.program.refuse("a scan whose result is read inside another expression", "")
        self.program.refuse("'deref' of a value that is not an iterator", repr(it)[:200])

    def _compute(self, it):
        if isinstance(it, Lifted):
            return self.apply(it.stencil, list(it.args))
        if isinstance(it, Select):
            return self._choose(it.condition, lambda: self.deref(it.then), lambda: self.deref(it.otherwise))
        if isinstance(it, ConcatWhere):
            return self._choose(self._condition(it), lambda: self.deref(it.then), lambda: self.deref(it.otherwise))
        return self.project(self.deref(it.whole), it.index)

    def _in_block(self, make, layer: dict | None = None):
        """make() evaluated into a block of its own (and a memo layer of its own):
        (statements, value). `layer`, if given, receives that memo layer (what the block
        computed at its top, not inside a branch of its own)."""
        outer = self.block
        self.block = []
        self._memo.append({})
        try:
            value = make()
        finally:
            memo = self._memo.pop()
            inner, self.block = self.block, outer
        if layer is not None:
            layer.update(memo)
        return inner, value

    def project(self, value, index: int):
        if isinstance(value, Tuple):
            return value.items[index]
        if isinstance(value, Select):
            return Select(value.condition, self.project(value.then, index), self.project(value.otherwise, index))
        if isinstance(value, ConcatWhere):
            then, otherwise = self.project(value.then, index), self.project(value.otherwise, index)
            return ConcatWhere(value.condition, value.env, then, otherwise, value.pos)
        if isinstance(value, (Lifted, Projected, Scan)):
            return Projected(value, index)
        self.program.refuse("'tuple_get' of a value that is not a tuple", repr(value)[:200])

    def _condition(self, where: ConcatWhere) -> Scalar:
        """A concat_where condition at the position it was shifted to."""
        from gt4py.next.iterator import ir as itir

        node = where.condition
        if isinstance(node, itir.FunCall) and str(getattr(node.fun, "id", "")) in ("unstructured_domain", "cartesian_domain"):
            parts = []
            for named_range in node.args:
                axis, start, end = named_range.args
                index = dict(where.pos).get(str(axis.value))
                if index is None:
                    self.program.refuse(f"a concat_where on {axis.value} at a point without it", "")
                for bound, op in ((start, ">="), (end, "<")):
                    if not isinstance(bound, itir.InfinityLiteral):
                        parts.append(f"(kiln::index_t({index}) {op} {self.eval(bound, where.env).code})")
            return Scalar("(" + " && ".join(parts) + ")" if parts else "true", "bool")
        saved, self._axes = self._axes, where.pos
        try:
            condition = self.eval(node, where.env)
        finally:
            self._axes = saved
        if not isinstance(condition, Scalar):
            self.program.refuse("a concat_where condition that is not a comparison of positions", str(node)[:200])
        return condition

    def fold(self, op, init, lists) -> Scalar:
        """A neighbour reduction: `op` over the elements in order from `init`, an element
        whose table entry is -1 skipped (and not read)."""
        if not all(isinstance(lst, List) for lst in lists) or not isinstance(init, Scalar):
            self.program.refuse("'reduce' of values that are not neighbour lists", "")
        acc = self._names.fresh("acc")
        self.block.append(f"{init.ctype} {acc} = {init.code};")
        for i in range(lists[0].length):
            conditions = sorted({c for lst in lists for c in lst.valid(i)})
            inner, value = self._in_block(
                lambda: self.apply(op, [Scalar(acc, init.ctype), *[lst.item(i) for lst in lists]])
            )
            body = [*inner, f"{acc} = {value.code};"]
            if conditions:
                self.block += [f"if ({' && '.join(conditions)}) {{", *body, "}"]
            else:
                self.block += body
        return Scalar(acc, init.ctype)

    def _read(self, it: Iter):
        field, pos = it.field, dict(it.pos)
        local = [i for i, (_, kind) in enumerate(field.dims) if kind == "local"]
        if len(local) > 1:
            self.program.refuse("a field with two neighbour dimensions", field.name)

        def index_of(dim: str) -> str:
            if dim not in pos:
                self.program.refuse(
                    f"a read of '{field.name}' at a point without a {dim} position",
                    f"its dimensions are {[d for d, _ in field.dims]}, the point has {list(pos)}",
                )
            return pos[dim]

        if local:
            n = self.program.max_neighbors(field.dims[local[0]][0])

            def item(i: int) -> Scalar:
                indices = [str(i) if kind == "local" else index_of(dim) for dim, kind in field.dims]
                return element(field, indices)

            for dim, kind in field.dims:  # the non-local positions must exist now
                if kind != "local":
                    index_of(dim)
            return List(n, item)
        indices = [index_of(dim) for dim, _ in field.dims]
        self.reads.add((field.name, tuple(indices)))
        if len(self._memo) == 1:  # no branch, reduction or if_ around it: read at every point
            self.unconditional.add((field.name, tuple(indices)))
        return element(field, indices)

    def can_deref(self, it):
        conditions = sorted(set(validity(it)))
        return Scalar("(" + " && ".join(conditions) + ")" if conditions else "true", "bool")

    def shift(self, it, offsets: tuple):
        if isinstance(it, Scalar):
            return it
        if isinstance(it, Tuple):
            return Tuple(tuple(self.shift(item, offsets) for item in it.items))
        if isinstance(it, Lifted):
            return Lifted(it.stencil, tuple(self.shift(a, offsets) for a in it.args))
        if isinstance(it, Select):
            return Select(it.condition, self.shift(it.then, offsets), self.shift(it.otherwise, offsets))
        if isinstance(it, Projected):
            return Projected(self.shift(it.whole, offsets), it.index)
        if isinstance(it, Scan):  # read at another level: a temporary's (scan_temporaries.py)
            self.program.refuse("a scan whose result is read inside another expression", "shifted")
        if isinstance(it, ConcatWhere):
            pos, ignored = dict(it.pos), []
            for tag, amount in zip(offsets[::2], offsets[1::2]):
                self._shift_position(pos, ignored, tag.value, amount)
            then, otherwise = self.shift(it.then, offsets), self.shift(it.otherwise, offsets)
            return ConcatWhere(it.condition, it.env, then, otherwise, tuple(pos.items()))
        if len(offsets) % 2:
            self.program.refuse("a shift with an odd number of offsets", "")
        pos = dict(it.pos)
        valid = list(it.valid) if isinstance(it, Iter) else []
        for tag, amount in zip(offsets[::2], offsets[1::2]):
            self._shift_position(pos, valid, tag.value, amount)
        if isinstance(it, IndexIter):
            return IndexIter(it.dim, tuple(pos.items()))
        if isinstance(it, Iter):
            return Iter(it.field, tuple(pos.items()), tuple(valid))
        self.program.refuse("'shift' of a value that is not an iterator", repr(it)[:200])

    def _shift_position(self, pos: dict, valid: list, tag, amount: Offset) -> None:
        cartesian = self.program.cartesian(tag)
        if cartesian is not None:
            source, target = cartesian
            if source not in pos:
                self.program.refuse(f"a shift along {source} at a point without a {source} position", "")
            step = amount.value if isinstance(amount, Offset) else amount
            if isinstance(step, Scalar):
                index = f"({pos.pop(source)} + {step.code})"
            else:
                step = offset_amount(amount, self.program)
                index = pos.pop(source) if step == 0 else f"({pos.pop(source)} {'+' if step > 0 else '-'} {abs(step)})"
            pos[target] = index
            return
        table = self.program.table(tag)
        if table.source not in pos:
            self.program.refuse(
                f"the shift {tag} at a point without a {table.source} position", f"the point has {list(pos)}"
            )
        neighbour = offset_amount(amount, self.program)
        entry = indexed(table.name, ((table.source, "h"), (table.local, "local")), (pos.pop(table.source), str(neighbour)))
        pos[table.target] = entry
        if table.may_skip:
            valid.append(f"({entry} >= 0)")

    # ---- if_ ----------------------------------------------------------------------------
    def _if(self, nodes, env):
        condition = self.eval(nodes[0], env)
        if not isinstance(condition, Scalar):
            self.program.refuse("'if_' on a condition that is not a scalar", "")
        return self._choose(condition, lambda: self.eval(nodes[1], env), lambda: self.eval(nodes[2], env))

    def _choose(self, condition: Scalar, then, otherwise):
        """`then()` or `otherwise()` by `condition`, each evaluated into a block of its own:
        a ternary where the branches need no statements, else an `if` assigning results.
        Branches that are fields (not scalars) make a Select, dereferenced later.

        Inside a branch its test is known: a test of the same C++ inside it takes its one
        side without testing again (compute_rho_theta_pgrad_and_update_vn tested
        `current_vn(h_, k_) >= 0.0` inside the branch that had tested it, around each of
        8 reads). The same text has the same value there (see bind); one reading a
        reduction's accumulator is not relied on."""
        for known in reversed(self._known):
            if known[0] == condition.code:
                known[2] = True
                return then() if known[1] else otherwise()
        then_layer, else_layer = {}, {}
        (then_block, then_value), then_used = self._branch(condition, True, then, then_layer)
        (else_block, else_value), else_used = self._branch(condition, False, otherwise, else_layer)
        then_items, else_items = flatten(then_value), flatten(else_value)
        scalars = all(isinstance(v, Scalar) for v in then_items + else_items)
        shared = self._computed_in_both(then_layer, else_layer) if scalars and not (then_used or else_used) else []
        if shared:
            # A field both branches compute (a let read on both sides, as icon4py's
            # apply_diffusion_to_theta_and_exner reads its nabla2 sum in each of three
            # branches) is computed once, before the `if`: wherever the `if` runs one of
            # its branches computed it, so this reads nothing that was not read there. No
            # test inside relied on `condition` (else the two sides' values could differ).
            for it in shared:
                self.deref(it)
            (then_block, then_value), then_used = self._branch(condition, True, then)
            (else_block, else_value), else_used = self._branch(condition, False, otherwise)
            then_items, else_items = flatten(then_value), flatten(else_value)
        if not scalars and (then_used or else_used):
            # The Select's blocks run at every point (below): evaluated again, no test
            # inside them may take one side on the strength of this one.
            saved, self._retrying = self._retrying, True
            try:
                (then_block, then_value), _ = self._branch(condition, True, then)
                (else_block, else_value), _ = self._branch(condition, False, otherwise)
            finally:
                self._retrying = saved
        if not scalars:
            # Fields: nothing is read yet (reads happen where the Select is dereferenced);
            # the blocks hold only scalar constants, which are safe to compute unconditionally.
            self.block += then_block + else_block
            return Select(condition, then_value, else_value)
        if len(then_items) != len(else_items) or not scalars:
            self.program.refuse("'if_' whose branches are not scalars or tuples of scalars alike", "")
        then_block, else_block, else_items = self._share(then_block, else_block, else_items)
        if not then_block and not else_block:
            merged = [
                Scalar(f"({condition.code} ? {a.code} : {b.code})", a.ctype) for a, b in zip(then_items, else_items)
            ]
            return unflatten(then_value, iter(merged))
        names = [self._names.fresh("r") for _ in then_items]
        for name, item in zip(names, then_items):
            self.block.append(f"{item.ctype} {name};")
        lines = [f"if ({condition.code}) {{", *then_block]
        lines += [f"{n} = {v.code};" for n, v in zip(names, then_items)]
        lines += ["} else {", *else_block]
        lines += [f"{n} = {v.code};" for n, v in zip(names, else_items)]
        lines.append("}")
        self.block.extend(lines)
        return unflatten(then_value, iter(Scalar(n, v.ctype) for n, v in zip(names, then_items)))


    def _share(self, then_block: list[str], else_block: list[str], else_items: list):
        """The constants both branches compute alike, computed once before the `if`.

        A `const` line at the top of both blocks (not inside a nested `if`) with the same C++
        (the else side's names taken as the then side's where those moved already), whose names
        are all bound outside the branches or moved before it, runs wherever the `if` runs and
        has one value there: moving it out reads nothing that was not read at that point
        before (compute_rho_theta_pgrad_and_update_vn read tangential_wind(h_, k_) in both
        branches of each upwind choice). K-offset and neighbour reads move only where both
        branches made them. The else side's later lines and results use the then side's name."""
        inside = {m.group(1) for line in then_block + else_block if (m := _DEFINED.match(line))}
        if not inside:
            return then_block, else_block, else_items
        rename: dict[str, str] = {}

        def renamed(code: str) -> str:
            return _NAME.sub(lambda m: rename.get(m.group(0), m.group(0)), code) if rename else code

        def top(block):
            depth, lines = 0, []
            for i, line in enumerate(block):
                if line.startswith("}"):
                    depth -= 1
                if depth == 0 and (m := _CONSTANT.fullmatch(line)) and ACCUMULATOR.search(line) is None:
                    lines.append((i, m.group(1), m.group(2), m.group(3)))
                if line.endswith("{"):
                    depth += 1
            return lines

        moved, moved_names, taken_then, taken_else = [], set(), set(), set()
        else_top = top(else_block)
        for i, ctype, name, code in top(then_block):
            if any(n in inside and n not in moved_names for n in _NAME.findall(code)):
                continue
            for j, other_ctype, other, other_code in else_top:
                if j not in taken_else and other_ctype == ctype and renamed(other_code) == code:
                    moved.append(then_block[i])
                    moved_names.add(name)
                    taken_then.add(i)
                    taken_else.add(j)
                    rename[other] = name
                    self._memo[-1][("bound", code, ctype)] = Scalar(name, ctype)
                    break
        if not moved:
            return then_block, else_block, else_items
        self.block.extend(moved)
        then_block = [line for i, line in enumerate(then_block) if i not in taken_then]
        else_block = [renamed(line) for j, line in enumerate(else_block) if j not in taken_else]
        else_items = [Scalar(renamed(v.code), v.ctype) for v in else_items]
        return then_block, else_block, else_items

    def _branch(self, condition: Scalar, value: bool, make, layer: dict | None = None):
        """(_in_block(make, layer), whether a test inside relied on `condition` being `value`)."""
        if self._retrying or ACCUMULATOR.search(condition.code) is not None:
            return self._in_block(make, layer), False
        known = [condition.code, value, False]
        self._known.append(known)
        try:
            return self._in_block(make, layer), known[2]
        finally:
            self._known.pop()

    def _computed_in_both(self, then_layer: dict, else_layer: dict) -> list:
        """The computed fields (lets, field operators) that both branches dereferenced at
        their top, to a value of scalars: what the `if` computes wherever it runs."""
        return [
            it for it, value in then_layer.items()
            if not isinstance(it, tuple) and it in else_layer
            and all(isinstance(v, Scalar) for v in flatten(value))
        ]


def element(field, indices) -> Scalar:
    """field(indices), of the field's own type (a bool field is a kiln bool array)."""
    return Scalar(indexed(field.name, field.dims, indices), field.ctype)


def validity(it) -> list[str]:
    if isinstance(it, Iter):
        return list(it.valid)
    if isinstance(it, (Select, ConcatWhere)):
        return validity(it.then) + validity(it.otherwise)
    if isinstance(it, Projected):
        return validity(it.whole)
    if isinstance(it, Lifted):
        return [c for a in it.args for c in validity(a)]
    if isinstance(it, Tuple):
        return [c for a in it.items for c in validity(a)]
    return []


def flatten(value) -> list:
    if isinstance(value, Tuple):
        return [leaf for item in value.items for leaf in flatten(item)]
    return [value]


def unflatten(shape, leaves):
    if isinstance(shape, Tuple):
        return Tuple(tuple(unflatten(item, leaves) for item in shape.items))
    return next(leaves)


def is_trivial(code: str) -> bool:
    return code.isidentifier() or code.replace(".", "", 1).replace("-", "", 1).isdigit() or code in ("true", "false")


def offset_amount(value, program) -> int:
    if isinstance(value, Offset) and isinstance(value.value, int):
        return value.value
    if isinstance(value, Scalar):
        text = value.code.split("(")[-1].rstrip(")")
        if text.lstrip("-").isdigit():
            return int(text)
    program.refuse("a neighbour index that is not a constant", repr(value)[:200])


def literal(node, refuse) -> Scalar:
    kind = str(node.type.kind.name).lower()
    ctype = builtins.CTYPES.get(kind)
    if ctype is None:
        refuse(f"a literal of type {kind}", node.value)
    value = node.value
    if ctype == "bool":
        return Scalar("true" if value in ("True", "true") else "false", "bool")
    if ctype in ("double", "float"):
        number = float(value)
        if number != number or number in (float("inf"), float("-inf")):
            refuse("a non-finite literal", value)
        text = repr(number)
        if "e" not in text and "." not in text:
            text += ".0"
        return Scalar(text + ("f" if ctype == "float" else ""), ctype)
    number = int(value)
    return Scalar(str(number) if ctype == "int32_t" else f"{ctype}({number})", ctype)


class Names:
    """Fresh C++ names for the translation's locals (GT4Py's own names may hold any Unicode)."""

    def __init__(self):
        self._counter = itertools.count()

    def fresh(self, prefix: str) -> str:
        return f"{prefix}{next(self._counter)}_"
