"""A scan read inside another expression, made a statement of its own into a temporary.

The translation evaluates a statement at one point, inlining every field operator into its
reader; a column scan cannot be inlined so (its value at a level depends on the levels before
it), so a scan that another expression reads, point-wise, at a K offset or as one element of
a tuple, is computed first into a kiln temporary, as GT4Py's own temporaries do, and the
reader reads the temporary.

Over which levels: GT4Py's semantics are those of its domain inference (what gtfn runs):
each field expression is computed over the domain its readers access, a scan starting its
column at that domain's first level (its last, backward). GT4Py's `infer_domain` pass needs
most of GT4Py's pipeline before it (inlined field operators, dead code removed), which took
~45 s for icon4py's vertically_implicit_solver_at_predictor_step on this machine (dead-code
elimination 23 s, inference 11 s, load 6), so the accesses are inferred here the way
`infer_domain` does, for the vertical dimension: from the statement's levels back through
field operators (the K offsets their stencils shift by, traced by GT4Py's `trace_shifts`),
lets, tuples, `if_` and `concat_where` (a condition on K cuts the levels into the ranges where
it holds and where it fails, `a & b` nested as GT4Py's canonical form nests it), the accesses
of one value unioned to their hull (minimum of the starts, maximum of the ends), as GT4Py's
domain union does. The columns are the statement's: a scan read through a neighbour table or
a horizontal shift, or on levels a bound of which is not an expression of the program's
parameters, is refused by name (GT4Py's transforms then handle it).

A let's value that computes such a scan and is read as a field becomes a temporary as well:
its readers may read it at other levels (icon4py's solve_w; see `_rewritten`).

Only a scan that the direct translation refused is moved (translate() retries with this), so
the translation of every other program stays what it was.
"""

from __future__ import annotations

import dataclasses

from gt4py.next import common
from gt4py.next.iterator import ir as itir
from gt4py.next.iterator.ir_utils import ir_makers as im
from gt4py.next.iterator.transforms import trace_shifts


@dataclasses.dataclass(frozen=True)
class Span:
    """Levels [start, end) (GTIR expressions of the program's parameters), and whether they
    are read through a horizontal shift (columns other than the point's)."""

    start: itir.Expr
    end: itir.Expr
    horizontal: bool = False


@dataclasses.dataclass(frozen=True)
class TupleAccess:
    """The accesses of a tuple's elements by index; `rest` applies to every element."""

    items: tuple  # ((index, access), ...)
    rest: object = None


class Binding:
    """A let's (or a field operator call's) parameter: its value, the environment the value is
    evaluated in, the union of its accesses (filled in while the let's body is inferred)."""

    def __init__(self, value, env):
        self.value, self.env, self.access = value, env, None
        self.has_scan = False  # whether its value computes a scan read by the statement
        self.rewritten = None
        self.closed = None


def _linear(e) -> tuple:
    """(base, constant) with e == base + constant; base None for a literal."""
    if isinstance(e, itir.Literal):
        return None, int(e.value)
    name = _call_name(e)
    if name in ("plus", "minus") and isinstance(e.args[1], itir.Literal):
        base, amount = _linear(e.args[0])
        return base, amount + int(e.args[1].value) * (1 if name == "plus" else -1)
    return e, 0


def _plus(a, amount: int):
    base, constant = _linear(a)
    constant += amount
    if base is None:
        return im.literal_from_value(constant)
    if constant == 0:
        return base
    return im.plus(base, im.literal_from_value(constant)) if constant > 0 else im.minus(base, im.literal_from_value(-constant))


def _operands(e, name: str) -> list:
    return [o for arg in e.args for o in _operands(arg, name)] if _call_name(e) == name else [e]


def _extreme(name: str, a, b):
    """minimum(a, b) or maximum(a, b), simplified: nested calls of the same flattened, equal
    bases kept once with the smaller (larger) constant, an operand of the other kind dropped
    where it cannot be the result (min(a, max(a + 1, b)) is a). The bounds stay short C++."""
    other = "maximum" if name == "minimum" else "minimum"
    better = min if name == "minimum" else max
    best: dict = {}  # str(base) -> (base, constant)
    rest = []
    for operand in _operands(a, name) + _operands(b, name):
        if _call_name(operand) == other:
            rest.append(operand)
            continue
        base, constant = _linear(operand)
        key = str(base)
        best[key] = (base, better(constant, best[key][1]) if key in best else constant)
    kept = [_plus(base, c) if base is not None else im.literal_from_value(c) for base, c in best.values()]
    for operand in rest:
        # min(.., x, max(.., y, ..)) with y >= x: the max is at least x, never below the min.
        inner = [_linear(o) for o in _operands(operand, other)]
        dominated = any(
            str(base) in best and (c >= best[str(base)][1] if name == "minimum" else c <= best[str(base)][1])
            for base, c in inner
        )
        if not dominated and str(operand) not in {str(k) for k in kept}:
            kept.append(operand)
    result = kept[0]
    for operand in kept[1:]:
        result = im.call(name)(result, operand)
    return result


def _minimum(a, b):
    return _extreme("minimum", a, b)


def _maximum(a, b):
    return _extreme("maximum", a, b)


def union(a, b):
    if a is None:
        return b
    if b is None:
        return a
    if isinstance(a, Span) and isinstance(b, Span):
        return Span(_minimum(a.start, b.start), _maximum(a.end, b.end), a.horizontal or b.horizontal)
    a, b = (a, b) if isinstance(a, TupleAccess) else (b, a)
    if isinstance(b, Span):
        return TupleAccess(a.items, union(a.rest, b))
    items = dict(a.items)
    for i, access in b.items:
        items[i] = union(items.get(i), access)
    return TupleAccess(tuple(sorted(items.items())), union(a.rest, b.rest))


def element(access, index: int):
    if isinstance(access, TupleAccess):
        return union(dict(access.items).get(index), access.rest)
    return access


def hull(access):
    """All the levels an access reads (a field computed in one loop over them)."""
    if isinstance(access, TupleAccess):
        result = access.rest
        for _, item in access.items:
            result = union(result, hull(item))
        return result
    return access


def _call_name(node) -> str:
    if isinstance(node, itir.FunCall) and isinstance(node.fun, itir.SymRef):
        return str(node.fun.id)
    return ""


def _is_scan_call(node) -> bool:
    """as_fieldop(scan(...)[, domain])(args...)."""
    return (
        isinstance(node, itir.FunCall) and _call_name(node.fun) == "as_fieldop"
        and _call_name(node.fun.args[0]) == "scan"
    )


_COMPARISONS = {"less": "<", "less_equal": "<=", "greater": ">", "greater_equal": ">=", "eq": "=="}
_MIRRORED = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "=="}


class ScanTemporaries:
    """The rewrite of one program (see the module's docstring). `refuse(construct, detail)`
    raises the translation's UnsupportedConstruct."""

    def __init__(self, program, offset_provider_type, refuse):
        self.program = program
        self.offset_provider_type = offset_provider_type
        self.refuse = refuse
        self.functions = {str(f.id): f for f in program.function_definitions}
        self.params = {str(p.id) for p in program.params}
        self._envs: dict = {}  # (id(let), id(env)) -> (let, env, the let's own env)
        self.accesses: dict = {}  # (id(scan call), id(env)) -> its access
        self._temps: dict = {}  # (id(scan call), id(env)) -> the expression reading its temporary
        self.declarations: list = []
        self.hoisted: list = []  # the statements computing the temporaries, in order
        self._counter = 0
        self._tops: list = []
        self._columns: list = []  # the statement's column range (none over levels alone)
        self._vertical = None  # the statement's vertical axis

    # ---- program --------------------------------------------------------------------------
    def rewrite(self):
        """The program with its scans read inside other expressions moved to temporaries, or
        None where there is none."""
        body = self._statements(self.program.body)
        if not self._temps:
            return None
        return itir.Program(
            id=self.program.id,
            function_definitions=self.program.function_definitions,
            params=self.program.params,
            declarations=[*self.program.declarations, *self.declarations],
            body=body,
        )

    def _statements(self, body) -> list:
        result = []
        for stmt in body:
            if isinstance(stmt, itir.IfStmt):
                result.append(itir.IfStmt(
                    cond=stmt.cond, true_branch=self._statements(stmt.true_branch),
                    false_branch=self._statements(stmt.false_branch),
                ))
            elif isinstance(stmt, itir.SetAt) and self._mentions_scan(stmt.expr):
                self.hoisted = []
                expr = self._statement(stmt)
                if expr is None:  # not a domain it follows: as it was (refused again if it needs this)
                    result.append(stmt)
                else:
                    result += [*self.hoisted, itir.SetAt(expr=expr, domain=stmt.domain, target=stmt.target)]
            else:
                result.append(stmt)
        return result

    def _mentions_scan(self, expr) -> bool:
        def mentions(node):
            return any(str(n.id) == "scan" for n in node.pre_walk_values().if_isinstance(itir.SymRef))

        return mentions(expr) or any(mentions(f.expr) for f in self.functions.values())

    def _statement(self, stmt):
        """The statement's expression with its scans read inside other expressions replaced
        by reads of temporaries (their statements in self.hoisted), or None for a domain that
        is not a literal one of levels and at most one column range (for all its outputs)."""
        domains = stmt.domain.args if _call_name(stmt.domain) == "make_tuple" else [stmt.domain]
        accesses, columns = [], {}
        for domain in domains:
            if _call_name(domain) not in ("unstructured_domain", "cartesian_domain"):
                return None
            span = None
            for named_range in domain.args:
                axis, start, end = named_range.args
                if axis.kind == common.DimensionKind.VERTICAL:
                    self._vertical, span = axis, Span(start, end)
                else:
                    columns[str(named_range)] = named_range
            if span is None or len(columns) > 1:
                return None
            accesses.append(span)
        self._columns = list(columns.values())  # the hoisted statements' columns: the statement's
        access = accesses[0] if len(domains) == 1 else TupleAccess(tuple(enumerate(accesses)))
        self._domain_kind = _call_name(domains[0])
        self.accesses = {}
        top: dict = {}  # one object for both walks: the environments below are keyed by it
        self._tops.append(top)  # kept alive: no later statement's reuses its id
        self._infer(stmt.expr, access, top)
        return self._rewrite(stmt.expr, top, root=True)

    # ---- inference of the accesses ----------------------------------------------------------
    def _let_env(self, node, env, params, args) -> dict:
        """The environment of a let's body: one per let and enclosing environment, the same
        object in both walks (inference and rewrite), which key the scans by it."""
        key = (id(node), id(env))
        if key not in self._envs:
            own = {} if _call_name(node) in self.functions else dict(env)
            for param, arg in zip(params, args):
                own[str(param.id)] = Binding(arg, env)
            self._envs[key] = (node, env, own)
        return self._envs[key][2]

    def _let(self, node):
        """(params, body) of a let or a call of a field operator (a function definition),
        or None."""
        if isinstance(node, itir.FunCall) and isinstance(node.fun, itir.Lambda):
            return node.fun.params, node.fun.expr
        name = _call_name(node)
        if name in self.functions:
            return self.functions[name].params, self.functions[name].expr
        return None

    def _infer(self, node, access, env) -> None:
        if access is None:
            return
        if isinstance(node, itir.SymRef):
            binding = env.get(str(node.id))
            if isinstance(binding, Binding):
                binding.access = union(binding.access, access)
            return
        if not isinstance(node, itir.FunCall):
            return
        let = self._let(node)
        if let is not None:
            params, body = let
            own = self._let_env(node, env, params, node.args)
            self._infer(body, access, own)
            for param in params:
                binding = own[str(param.id)]
                before = len(self.accesses)
                self._infer(binding.value, binding.access, env)
                binding.has_scan = len(self.accesses) > before
            return
        name = _call_name(node)
        if isinstance(node.fun, itir.FunCall) and _call_name(node.fun) == "as_fieldop":
            return self._infer_fieldop(node, access, env)
        if name == "concat_where":
            condition, then, otherwise = node.args
            inside, outside = self._cut(condition, env)
            self._infer(then, self._within(access, inside), env)
            self._infer(otherwise, self._within(access, outside), env)
        elif name == "if_":
            for branch in node.args[1:]:
                self._infer(branch, access, env)
        elif name == "make_tuple":
            for i, arg in enumerate(node.args):
                self._infer(arg, element(access, i), env)
        elif name == "tuple_get":
            if not isinstance(node.args[0], itir.Literal):
                self.refuse("'tuple_get' at an index that is not a literal, around a scan read inside another expression", "")
            index = int(node.args[0].value)
            self._infer(node.args[1], TupleAccess(((index, access),)), env)
        else:  # broadcast and scalar builtins: the same points
            for arg in node.args:
                self._infer(arg, access, env)

    def _infer_fieldop(self, node, access, env) -> None:
        stencil = node.fun.args[0]
        span = hull(access)
        if _is_scan_call(node):
            key = (id(node), id(env))
            if key in self.accesses:
                self.refuse("a scan reached twice by the inference of its levels", "")
            self.accesses[key] = span
        try:
            shifts = trace_shifts.trace_stencil(stencil, num_args=len(node.args))
        except Exception as error:  # noqa: BLE001: GT4Py's tracer on what it cannot follow
            self.refuse("a field operator whose shifts GT4Py cannot trace, around a scan read inside another expression", str(error)[:200])
        for arg, arg_shifts in zip(node.args, shifts):
            arg_access = None
            for shift in arg_shifts:
                arg_access = union(arg_access, self._shifted(span, shift))
            self._infer(arg, arg_access, env)

    def _shifted(self, span: Span, shift) -> Span:
        amount, horizontal = 0, span.horizontal
        for tag, value in zip(shift[::2], shift[1::2]):
            vertical = False
            if isinstance(tag, itir.CartesianOffset):
                vertical = tag.domain.kind == common.DimensionKind.VERTICAL
            elif isinstance(tag, itir.OffsetLiteral):
                dim = self.offset_provider_type.get(tag.value)
                vertical = isinstance(dim, common.Dimension) and dim.kind == common.DimensionKind.VERTICAL
            if vertical:
                if not (isinstance(value, itir.OffsetLiteral) and isinstance(value.value, int)):
                    self.refuse("a K offset that is not a constant, around a scan read inside another expression", "")
                amount += value.value
            else:
                horizontal = True
        return Span(_plus(span.start, amount), _plus(span.end, amount), horizontal)

    def _within(self, access, pieces: list):
        """`access` cut to the levels of `pieces` ((first or None, end or None) each), the
        parts' hull."""
        if access is None:
            return None
        if isinstance(access, TupleAccess):
            items = tuple((i, self._within(a, pieces)) for i, a in access.items)
            return TupleAccess(items, self._within(access.rest, pieces))
        result = None
        for first, end in pieces:
            start = access.start if first is None else _maximum(access.start, first)
            stop = access.end if end is None else _minimum(access.end, end)
            result = union(result, Span(start, stop, access.horizontal))
        return result

    def _cut(self, condition, env):
        """The levels where a concat_where condition holds and those where it does not, each a
        list of ranges (first or None, end or None): a condition on columns alone holds and
        fails on all levels. The branches of `a & b` as GT4Py's canonical form nests them,
        `concat_where(a, concat_where(b, x, y), y)`: y is read where a fails and where a holds
        and b fails (infer_domain then takes the hull of the two)."""
        name = _call_name(condition)
        if name in ("and_", "or_") and len(condition.args) == 2:
            (in1, out1), (in2, out2) = (self._cut(arg, env) for arg in condition.args)
            if name == "and_":
                return _meet(in1, in2), out1 + _meet(in1, out2)
            return in1 + _meet(out1, in2), _meet(out1, out2)
        if name == "not_":
            inside, outside = self._cut(condition.args[0], env)
            return outside, inside
        if name in _COMPARISONS and len(condition.args) == 2:
            op = _COMPARISONS[name]
            a, b = condition.args
            if isinstance(b, itir.AxisLiteral) and not isinstance(a, itir.AxisLiteral):
                a, b, op = b, a, _MIRRORED[op]
            if isinstance(a, itir.AxisLiteral):
                if a.kind != common.DimensionKind.VERTICAL:
                    return [(None, None)], [(None, None)]
                bound = self._scalar(b, env)
                inside = {
                    "<": (None, bound), "<=": (None, _plus(bound, 1)),
                    ">": (_plus(bound, 1), None), ">=": (bound, None),
                    "==": (bound, _plus(bound, 1)),
                }[op]
                first, end = inside
                outside = ([(None, first)] if first is not None else []) + ([(end, None)] if end is not None else [])
                return [inside], outside
        self.refuse("a concat_where condition that is not a comparison of positions, around a scan read inside another expression", str(condition)[:200])

    def _scalar(self, node, env):
        """A scalar expression with the lets it names replaced by their values: an expression
        of the program's parameters."""
        if isinstance(node, itir.Literal):
            return node
        if isinstance(node, itir.SymRef):
            name = str(node.id)
            binding = env.get(name)
            if isinstance(binding, Binding):
                return self._scalar(binding.value, binding.env)
            if name in self.params and name not in env:
                return node
        if isinstance(node, itir.FunCall) and _call_name(node) in ("plus", "minus", "minimum", "maximum", "multiplies"):
            return im.call(_call_name(node))(*(self._scalar(arg, env) for arg in node.args))
        self.refuse("a level bound that is not an expression of the program's parameters, around a scan read inside another expression", str(node)[:200])

    # ---- rewrite ----------------------------------------------------------------------------
    def _rewrite(self, node, env, root: bool = False):
        if not isinstance(node, itir.FunCall):
            return node
        if _is_scan_call(node) and not root and (id(node), id(env)) in self.accesses:
            return self._temporary(node, env)
        let = self._let(node)
        if let is not None:
            params, body = let
            own = self._let_env(node, env, params, node.args)
            new_body = self._rewrite(body, own, root)
            args = [self._rewritten(own[str(p.id)]) for p in params]
            if new_body is body and all(a is b for a, b in zip(args, node.args)):
                return node
            if new_body is body and not isinstance(node.fun, itir.Lambda):
                return itir.FunCall(fun=node.fun, args=args)
            return itir.FunCall(fun=itir.Lambda(params=list(params), expr=new_body), args=args)
        fun = self._rewrite(node.fun, env) if isinstance(node.fun, itir.FunCall) else node.fun
        args = [self._rewrite(arg, env) for arg in node.args]
        if fun is node.fun and all(a is b for a, b in zip(args, node.args)):
            return node
        return itir.FunCall(fun=fun, args=args)

    def _rewritten(self, binding: Binding):
        """A let's value as its body reads it. A value that computes a scan and is read as a
        field (not as a tuple) is a temporary too: its readers may read it at other levels,
        and a statement's outputs read at other levels are refused (program.py's _writes),
        where in icon4py's solve_w the value `concat_where(K < n, scan(...), next_w)` reads
        next_w, an output of the statement that reads the value one level down."""
        if binding.rewritten is None:
            value = self._rewrite(binding.value, binding.env)
            if (
                binding.has_scan and isinstance(binding.access, Span) and not _is_scan_call(binding.value)
                and _read_of_temporary(value) is None
            ):
                value = self._hoist(self._closed(value, binding.env), binding.access, [None])
            binding.rewritten = value
        return binding.rewritten

    def _temporary(self, node, env):
        """The expression that reads the temporary holding this scan (made the first time):
        one temporary per element of a tuple-valued scan."""
        key = (id(node), id(env))
        if key not in self._temps:
            call = itir.FunCall(fun=node.fun, args=[self._rewrite(arg, env) for arg in node.args])
            init = node.fun.args[0].args[2]
            inits = init.args if _call_name(init) == "make_tuple" else [init]
            if not all(isinstance(i, itir.Literal) for i in inits):
                self.refuse("a scan read inside another expression whose initial state is not literal", str(init)[:200])
            self._temps[key] = self._hoist(self._closed(call, env), self.accesses[key], [i.type for i in inits])
        return self._temps[key]

    def _hoist(self, expr, span: Span, dtypes: list):
        """A statement computing `expr` (closed) over the statement's columns and `span`'s
        levels into new temporaries, one per element (of the types `dtypes`, None for the
        type of the value: program.py's _typed); the expression that reads them."""
        if span.horizontal:
            self.refuse("a scan read through a neighbour table or a horizontal shift", "")
        domain = im.call(self._domain_kind)(*self._columns, im.call("named_range")(self._vertical, span.start, span.end))
        refs = []
        for dtype in dtypes:
            self._counter += 1
            name = f"__kiln_scan_{self._counter}"
            self.declarations.append(itir.Temporary(id=name, domain=domain, dtype=dtype))
            refs.append(im.ref(name))
        if len(refs) == 1:
            target, domains, read = refs[0], domain, refs[0]
        else:
            target, domains, read = im.make_tuple(*refs), im.make_tuple(*[domain] * len(refs)), im.make_tuple(*refs)
        self.hoisted.append(itir.SetAt(expr=expr, domain=domains, target=target))
        return read

    def _closed(self, expr, env):
        """`expr` inside the lets that bind the names it reads from `env` (each value closed
        the same way in its own environment): an expression of the program's symbols."""
        needed = [name for name in _free(expr) if name in env]
        if not needed:
            return expr
        values = []
        for name in needed:
            binding = env[name]
            if not isinstance(binding, Binding):
                self.refuse("a scan read inside another expression, on a stencil's own argument", name)
            if binding.closed is None:
                binding.closed = self._closed(self._rewritten(binding), binding.env)
            values.append(binding.closed)
        return itir.FunCall(fun=itir.Lambda(params=[im.sym(n) for n in needed], expr=expr), args=values)


def _read_of_temporary(expr):
    """The temporary `expr` is (through lets: `(λ(x) → x)(__kiln_scan_1)`), or None."""
    scope: dict = {}
    while True:
        if isinstance(expr, itir.FunCall) and isinstance(expr.fun, itir.Lambda):
            scope = {**scope, **{str(p.id): (arg, scope) for p, arg in zip(expr.fun.params, expr.args)}}
            expr = expr.fun.expr
        elif isinstance(expr, itir.SymRef) and str(expr.id) in scope:
            expr, scope = scope[str(expr.id)]
        elif isinstance(expr, itir.SymRef) and str(expr.id).startswith("__kiln_scan_"):
            return expr
        else:
            return None


def _meet(a: list, b: list) -> list:
    """The pairwise intersections of two lists of level ranges."""
    result = []
    for first_a, end_a in a:
        for first_b, end_b in b:
            first = first_a if first_b is None else first_b if first_a is None else _maximum(first_a, first_b)
            end = end_a if end_b is None else end_b if end_a is None else _minimum(end_a, end_b)
            result.append((first, end))
    return result


def _free(node, bound=frozenset()) -> list:
    """The names `node` reads that it does not bind, in order of first appearance."""
    found: dict = {}

    def walk(n, bound):
        if isinstance(n, itir.SymRef):
            if str(n.id) not in bound:
                found[str(n.id)] = None
        elif isinstance(n, itir.Lambda):
            walk(n.expr, bound | {str(p.id) for p in n.params})
        elif isinstance(n, itir.FunCall):
            walk(n.fun, bound)
            for arg in n.args:
                walk(arg, bound)

    walk(node, bound)
    return list(found)


def rewrite(program, offset_provider_type, refuse):
    """The program with its scans read inside other expressions computed into temporaries
    first, or None where it has none."""
    return ScanTemporaries(program, offset_provider_type, refuse).rewrite()
