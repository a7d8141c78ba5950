"""A GT4Py program (GTIR after GT4Py's transforms) to a KernelTemplate.

The program's statements (`SetAt`: a field expression written to a field over a domain)
become kiln loops in order, each a phase of the kernel: `kiln::for_each_point` over a
horizontal x vertical domain, `kiln::for_each_column` over a horizontal one, and a column scan
(`scan_operator`) `kiln::for_each_level_up/down`, whose state at the level before is read back
from the output it wrote there (kiln's scans carry state through arrays, which lets the
columns be the vector loop). Fields become arrays, the neighbour tables that the statements
shift through become table arrays (`indexes edges or -1` where GT4Py's connectivity has skip
values), scalars that bound a domain become kiln domain parameters (compiled in, or read at
run time), the other scalars run-time scalar arguments, GT4Py's temporaries kiln temporaries.
"""

from __future__ import annotations

import re

from .branches import simplified, zone_loops
from .stencil import Evaluator, Names
from .template import ArrayDecl, KernelTemplate, ScalarDecl, TemporaryDecl, indexed, size_name
from .values import Closure, FieldRef, Iter, Projected, Scalar, Scan, Tuple
from . import builtins

CPP_RESERVED = {
    "auto", "bool", "break", "case", "char", "class", "const", "continue", "default", "delete", "do",
    "double", "else", "enum", "extern", "float", "for", "goto", "if", "int", "long", "new", "operator",
    "private", "public", "register", "return", "short", "signed", "sizeof", "static", "struct",
    "switch", "template", "this", "throw", "try", "typedef", "union", "unsigned", "using", "void",
    "volatile", "while", "h_", "k_", "cells", "edges", "vertices", "levels", "int32_t", "int64_t",
}
H, K = "h_", "k_"  # the C++ names of the point's horizontal and vertical index
# The same in the loop's first output's own indices, which the loop helpers walk (template.py).
HR, KR = "hr_", "kr_"
# A test of the point's horizontal index against a bound X that a cut at X decides: h >= X or
# h < X as stencil.py writes a concat_where's, X <= h or X > h as it writes a comparison.
_INDEX = r"kiln::index_t\(" + H + r"\)"
_HORIZONTAL_TEST = re.compile(rf"\({_INDEX} (>=|<) ([\w-]+)\)|\(([\w-]+) (<=|>) {_INDEX}\)")
MAX_CUTS = 2  # bounds cut at in one loop: up to 4 loops


def _test_bound(m) -> str:
    return m.group(2) or m.group(3)


def _test_holds_at_or_above(m) -> bool:
    """Whether the test holds at and above its bound (h >= X, X <= h), not below it."""
    return (m.group(1) or m.group(4)) in (">=", "<=")


class ProgramTranslation:
    def __init__(self, program, arg_types, offset_provider_type, refuse):
        self.ir = program
        self.name = str(program.id)
        self.refuse = refuse
        self.offset_provider_type = offset_provider_type
        self.names = Names()
        self.fields: dict[str, tuple[FieldRef, int]] = {}  # GT4Py name -> (field, position)
        self.scalars: dict[str, tuple[str, str, int]] = {}  # GT4Py name -> (C++ name, ctype, position)
        self.temporaries: dict[str, FieldRef] = {}
        self.used: dict[str, None] = {}  # fields, scalars and tables read or written, in order
        self.tables: dict[str, "Table"] = {}
        self.domain_params: dict[str, None] = {}
        self.horizontal_params: dict[str, None] = {}
        self.contains: dict[str, tuple[str, str]] = {}
        self.vertical_base = ""
        self.functions = {str(f.id): f for f in program.function_definitions}
        self._temporary_ends: dict[str, tuple[tuple[int, str], ...]] = {}  # temporary -> end bounds
        self._last_reads: set = set()  # what the last statement read: (array, indices)
        self.written: set[str] = set()  # the C++ names of the arrays the statements write
        self.same_shapes: list[tuple[str, ...]] = []  # outputs of one scan: one shape at the call
        self.spans: list[tuple[str, int, str, str, str]] = []  # (array, dimension index, start, end, 'written' or 'read')
        self._classify(arg_types)

    # ---- symbols ------------------------------------------------------------------------
    def _classify(self, arg_types) -> None:
        from gt4py.next.type_system import type_specifications as ts

        for position, (param, type_) in enumerate(zip(self.ir.params, arg_types)):
            name = str(param.id)
            cname = name if name not in CPP_RESERVED and not name.startswith("kiln") else f"{name}_p"
            if isinstance(type_, ts.FieldType):
                dims = tuple((d.value, dim_kind(d)) for d in type_.dims)
                self.fields[name] = (FieldRef(cname, dims, ctype_of(type_.dtype, self.refuse)), position)
            elif isinstance(type_, ts.ScalarType):
                self.scalars[name] = (cname, ctype_of(type_, self.refuse), position)
            else:
                self.refuse(f"a parameter of type {type_}", f"parameter '{name}'")

    def symbol(self, name: str, pos):
        """The value of a program symbol at a point, or None for a builtin's name."""
        if name in self.fields:
            self.used[name] = None
            return Iter(self.fields[name][0], pos)
        if name in self.temporaries:
            if not self.temporaries[name].ctype:
                self.refuse("a temporary read before the statement that writes it", name)
            return Iter(self.temporaries[name], pos)
        if name in self.scalars:
            cname, ctype, _ = self.scalars[name]
            self.used[name] = None
            return Scalar(cname, ctype)
        if name in self.functions:  # a field operator, in GTIR before GT4Py's transforms
            definition = self.functions[name]
            return Closure(tuple(str(p.id) for p in definition.params), definition.expr, {})
        return None

    def table(self, tag: str) -> "Table":
        if tag not in self.tables:
            from gt4py.next import common

            conn = self.offset_provider_type.get(tag) if isinstance(tag, str) else None
            if not isinstance(conn, common.NeighborConnectivityType):
                self.refuse(f"the offset {tag!r}", "not a neighbour table of the offset provider")
            name = tag if tag not in self.fields and tag not in self.scalars and tag not in CPP_RESERVED else f"{tag}_table"
            dtype = str(conn.dtype.scalar_type.__name__)
            if dtype not in ("int32", "int64"):
                self.refuse(f"a neighbour table of {dtype}", tag)
            self.tables[tag] = Table(
                name, conn.domain[0].value, conn.codomain.value, conn.max_neighbors,
                bool(conn.has_skip_values), conn.domain[1].value, builtins.CTYPES[dtype],
            )
        return self.tables[tag]

    def max_neighbors(self, local_dim: str) -> int:
        for tag, conn in self.offset_provider_type.items():
            domain = getattr(conn, "domain", ())
            if len(domain) == 2 and domain[1].value == local_dim:
                return int(conn.max_neighbors)
        self.refuse(f"the neighbour dimension '{local_dim}'", "no table of the offset provider has it")

    def cartesian(self, tag):
        """(source, target) dimension of a Cartesian shift, or None for a neighbour table."""
        if isinstance(tag, tuple) and tag[0] == "cartesian":
            return tag[2], tag[1]
        from gt4py.next import common

        if isinstance(tag, str) and isinstance(self.offset_provider_type.get(tag), common.Dimension):
            dim = self.offset_provider_type[tag].value
            return dim, dim
        return None

    # ---- program ------------------------------------------------------------------------
    def translate(self) -> KernelTemplate:
        from gt4py.next.iterator import ir as itir

        for temporary in self.ir.declarations:
            self._declare_temporary(temporary)
        return self._template("\n".join(self._statements(self.ir.body)))

    def _statements(self, body) -> list[str]:
        """Statements in order; a program's `if` on scalars (IfStmt) becomes a C++ `if`
        around its branches' loops: every thread takes the same branch, so the phases and
        their barriers stay matched."""
        from gt4py.next.iterator import ir as itir

        lines = []
        for stmt in body:
            if isinstance(stmt, itir.SetAt):
                lines.append(self._statement(stmt))
            elif isinstance(stmt, itir.IfStmt):
                evaluator = Evaluator(self, ())
                condition = evaluator.eval(stmt.cond, {})
                if not isinstance(condition, Scalar) or evaluator.block:
                    self.refuse("an 'if' statement on a condition that is not a plain scalar", str(stmt.cond)[:200])
                lines.append(f"if ({condition.code}) {{")
                lines += ["  " + line for text in self._statements(stmt.true_branch) for line in text.splitlines()]
                lines.append("} else {")
                lines += ["  " + line for text in self._statements(stmt.false_branch) for line in text.splitlines()]
                lines.append("}")
            else:
                self.refuse(f"the statement '{type(stmt).__name__}'", "")
        return lines

    def _declare_temporary(self, temporary) -> None:
        from gt4py.next.type_system import type_specifications as ts

        if temporary.dtype is not None and not isinstance(temporary.dtype, ts.ScalarType):
            self.refuse("a temporary of tuple type", str(temporary.id))
        ranges = self._domain(temporary.domain)
        dims = tuple((dim, kind) for dim, kind, _, _ in ranges)
        name = self.names.fresh("tmp")
        # No type (scan_temporaries.py's, of a value it does not type): the type of the value
        # the statement writing it computes (_typed).
        ctype = ctype_of(temporary.dtype, self.refuse) if temporary.dtype is not None else ""
        field = FieldRef(name, dims, ctype)
        self.temporaries[str(temporary.id)] = field
        self._temporary_ends[name] = tuple((i, end) for i, (_, _, _, end) in enumerate(ranges))

    def _domain(self, node) -> list[tuple[str, str, str, str]]:
        """[(dimension, kind, start, end)]: the bounds as C++ (and Python) expressions."""
        from gt4py.next.iterator import ir as itir

        if isinstance(node, itir.FunCall) and str(getattr(node.fun, "id", "")) == "make_tuple":
            # Before GT4Py's transforms a tuple of outputs has a tuple of domains: one loop
            # writes them all, so they must agree.
            if len({str(arg) for arg in node.args}) != 1:
                self.refuse("outputs of one statement over different domains", str(node)[:200])
            node = node.args[0]
        if not (isinstance(node, itir.FunCall) and str(getattr(node.fun, "id", "")) in ("unstructured_domain", "cartesian_domain")):
            self.refuse("a domain that is not a literal domain expression", str(node)[:200])
        ranges = []
        for named_range in node.args:
            axis, start, end = named_range.args
            kind = "v" if axis.kind.name == "VERTICAL" else "h"
            ranges.append((str(axis.value), kind, self._bound(start, kind), self._bound(end, kind)))
        return ranges

    def _bound(self, node, kind: str) -> str:
        """A domain bound as C++: parameters, literals, + and -, minimum and maximum, and a
        field's extent (`get_domain_range`), written `@name:dim@` until the call's shapes are
        known (template.py). The same text with min/max is a Python expression of the
        parameters, which checks temporaries at the call (call.py)."""
        from gt4py.next.iterator import ir as itir

        if isinstance(node, itir.Literal):
            return str(int(node.value))
        if isinstance(node, itir.SymRef) and str(node.id) in self.scalars:
            cname, ctype, _ = self.scalars[str(node.id)]
            if ctype not in ("int32_t", "int64_t"):
                self.refuse("a domain bound that is not an integer", str(node.id))
            self.domain_params[str(node.id)] = None
            if kind == "h":
                self.horizontal_params[cname] = None
            return cname
        fun = str(getattr(node, "fun", None) and getattr(node.fun, "id", ""))
        if fun in ("plus", "minus") and len(node.args) == 2:
            op = "+" if fun == "plus" else "-"
            return f"({self._bound(node.args[0], kind)} {op} {self._bound(node.args[1], kind)})"
        if fun in ("minimum", "maximum") and len(node.args) == 2:
            a, b = (self._bound(arg, kind) for arg in node.args)
            return f"kiln::{fun[:3]}<kiln::index_t>({a}, {b})"
        if fun == "tuple_get" and isinstance(node.args[1], itir.FunCall) and getattr(node.args[1].fun, "id", "") == "get_domain_range":
            which = int(node.args[0].value)
            field, axis = node.args[1].args
            name = str(getattr(field, "id", ""))
            if name in self.fields:
                dims = [d for d, _ in self.fields[name][0].dims]
                if str(axis.value) in dims:
                    self.used[name] = None
                    mark = "^" if which == 0 else "$"  # its start, one past its end (template.py)
                    return f"@{mark}{self.fields[name][0].name}:{dims.index(str(axis.value))}@"
        self.refuse("a domain bound beyond parameters, literals, +, -, minimum, maximum and field extents", str(node)[:200])

    def _targets(self, node) -> list[FieldRef]:
        from gt4py.next.iterator import ir as itir

        if isinstance(node, itir.SymRef):
            name = str(node.id)
            if name in self.temporaries:
                return [self.temporaries[name]]
            if name in self.fields:
                self.used[name] = None
                return [self.fields[name][0]]
        if isinstance(node, itir.FunCall) and str(getattr(node.fun, "id", "")) == "make_tuple":
            return [t for arg in node.args for t in self._targets(arg)]
        if isinstance(node, itir.FunCall) and str(getattr(node.fun, "id", "")) == "tuple_get":
            index, whole = node.args
            if isinstance(index, itir.Literal) and isinstance(whole, itir.FunCall) and str(getattr(whole.fun, "id", "")) == "make_tuple":
                return self._targets(whole.args[int(index.value)])
        self.refuse("an output that is not a field or a tuple of fields", str(node)[:200])

    def _statement(self, stmt) -> str:
        from gt4py.next.iterator import ir as itir
        from gt4py.next.iterator.ir_utils import ir_makers as im

        domain, target = stmt.domain, stmt.target
        if (
            isinstance(domain, itir.FunCall) and str(getattr(domain.fun, "id", "")) == "make_tuple"
            and len({str(arg) for arg in domain.args}) > 1
            and isinstance(target, itir.FunCall) and str(getattr(target.fun, "id", "")) == "make_tuple"
            and len(target.args) == len(domain.args)
        ):
            # A scan writes all its outputs in one loop: over the first output's domain, the
            # outputs required to have one shape (checked at the call, call.py).
            if self._is_scan(stmt.expr) and isinstance(whole_scan(Evaluator(self, ()).eval(stmt.expr, {})), Scan):
                targets = self._targets(target)
                self.same_shapes.append(tuple(t.name for t in targets))
                return self._statement(itir.SetAt(expr=stmt.expr, domain=domain.args[0], target=target))
            # Outputs of one field operator over different domains: a loop each, over its own,
            # unless a later loop would read what an earlier one wrote (GT4Py computes all first).
            parts, written = [], set()
            for i, (d, t) in enumerate(zip(domain.args, target.args)):
                parts.append(self._statement(itir.SetAt(expr=im.tuple_get(i, stmt.expr), domain=d, target=t)))
                if written & {name for name, _ in self._last_reads}:
                    self.refuse("outputs over different domains of which one reads another", str(stmt.target)[:200])
                written |= {f.name for f in self._targets(t)}
            return "\n".join(parts)
        ranges = self._domain(stmt.domain)
        targets = self._targets(stmt.target)
        horizontal = [r for r in ranges if r[1] == "h"]
        vertical = [r for r in ranges if r[1] == "v"]
        if len(horizontal) > 1 or len(vertical) > 1 or not ranges:
            self.refuse("a domain of more than one horizontal or vertical dimension, or of none", str(stmt.domain)[:200])
        pos = []
        hdim = vdim = h0 = h1 = v0 = v1 = None
        if horizontal:
            hdim, _, h0, h1 = horizontal[0]
            self._contains(hdim, h0, h1)
            pos.append((hdim, H))
        if vertical:
            vdim, _, v0, v1 = vertical[0]
            self._contains(vdim, v0, v1)
            pos.append((vdim, K))
        for target in targets:
            if target.name not in {t.name for t in self.temporaries.values()} and not self.vertical_base:
                if any(kind == "v" for _, kind in target.dims):
                    self.vertical_base = target.name
        evaluator = Evaluator(self, tuple(pos))
        value = evaluator.eval(stmt.expr, {})
        self._last_reads = evaluator.reads
        layout = targets[0].name
        self._record_writes(targets, ranges)
        value = whole_scan(value)
        if isinstance(value, Scan):
            if not vertical:
                self.refuse("a scan over a domain without a vertical dimension", "")
            loop = self._scan(evaluator, value, targets, layout, h0, h1, v0, v1, tuple(pos), vdim)
            self._record_reads(evaluator.unconditional, ranges)  # made as the values were
            return loop
        results = flatten_fields(evaluator.deref(value))
        if len(results) != len(targets):
            self.refuse("an output tuple whose size differs from the value's", "")
        targets = [self._typed(t, r) for t, r in zip(targets, results)]
        body = evaluator.block + self._writes(evaluator, targets, results, pos)
        if horizontal and vertical:
            cuts = self._horizontal_cuts(body)
            if cuts:
                self._record_reads(evaluator.unconditional, ranges)
                return self._cut_loops("\n".join(body), cuts, targets[0], hdim, vdim, h0, h1, v0, v1)
            body = simplified("\n".join(body).split("\n"))
            head = self._layout_loop("for_each_point", targets[0], hdim, vdim, h0, h1, v0, v1)
        elif horizontal:
            head = f"kiln::for_each_column({h0}, {h1}, [&](kiln::index_t {H}) {{"
        else:  # a column of levels alone: its levels are independent points, shared by the threads
            head = f"kiln::for_each_column({v0}, {v1}, [&](kiln::index_t {K}) {{"
        self._record_reads(evaluator.unconditional, ranges)  # made as the values were
        return "\n".join([head, *("  " + line for line in body), "});"])

    def _typed(self, target: FieldRef, result) -> FieldRef:
        """A temporary declared without a type, given its value's (a scalar's ctype)."""
        if target.ctype or not isinstance(result, Scalar):
            return target
        typed = FieldRef(target.name, target.dims, result.ctype)
        for name, field in self.temporaries.items():
            if field.name == target.name:
                self.temporaries[name] = typed
        return typed

    def _scan(self, evaluator, scan: Scan, targets, layout, h0, h1, v0, v1, pos, vdim) -> str:
        first, previous = (v0, f"{K} - 1") if scan.forward else (f"{v1} - 1", f"{K} + 1")
        init = flatten_fields(scan.init)
        if len(init) != len(targets):
            self.refuse("a scan whose state is not its output", "the state and the outputs differ in size")
        states = []
        for target, start in zip(targets, init):
            before = write(target, tuple((d, previous if d == vdim else i) for d, i in pos), self)
            states.append(Scalar(f"({K} == {first} ? {target.ctype}({start.code}) : {before})", target.ctype))
        state = states[0] if not isinstance(scan.init, Tuple) else unflatten_like(scan.init, states)
        value = evaluator.apply(scan.pass_, [evaluator.bind(state), *scan.args])
        results = flatten_fields(value)
        body = evaluator.block + self._writes(evaluator, targets, results, pos, scan=vdim)
        if h0 is None:
            # A scan over levels alone: one column, one phase (so threads and GPUs run it once),
            # its levels in order inside.
            loop = "for_each_level" if scan.forward else "for_each_level_reversed"
            head = f"kiln::for_each_column(0, 1, [&](kiln::index_t) {{ kiln::{loop}({v0}, {v1}, [&](kiln::index_t {K}) {{"
            return "\n".join([head, *("  " + line for line in body), "}); });"])
        loop = "for_each_level_up" if scan.forward else "for_each_level_down"
        head = self._layout_loop(loop, targets[0], pos[0][0], vdim, h0, h1, v0, v1)
        return "\n".join([head, *("  " + line for line in body), "});"])

    def _horizontal_cuts(self, body: list[str]) -> list[str]:
        """The bounds X (scalar arguments or numbers, at most MAX_CUTS of them, in order of
        appearance) that the body tests the point's horizontal index against (`h >= X`,
        `X <= h` and their negations: icon4py's zones, concat_where(EdgeDim >= X, ...));
        none where there are more."""
        names = {cname for cname, _, _ in self.scalars.values()}
        bounds = list(dict.fromkeys(_test_bound(m) for m in _HORIZONTAL_TEST.finditer("\n".join(body))))
        if len(bounds) > MAX_CUTS or not all(b in names or re.fullmatch(r"-?\d+", b) for b in bounds):
            return []
        return bounds

    def _cut_loops(self, text: str, cuts: list[str], layout: FieldRef, hdim, vdim, h0, h1, v0, v1) -> str:
        """The point loop cut at each bound in `cuts`, below it and from it on, each part with
        the body's tests of the horizontal index against that bound written as the constant
        they are there, then folded with the side they leave dead (branches.py).

        Each test stood for a branch in the vector loop around the reads it guards, so a
        neighbour's read was a conditional scalar load per lane (x86 has no masked scalar
        load): icon4py's apply_diffusion_to_vn, whose nabla4 is `concat_where(EdgeDim >=
        start_2nd_nudge_line_idx_e, ...)`, ran 116 ms a call against gtfn_cpu's 77 (bench,
        torus 128x80, 80 levels). Each point computes what it computed, bit for bit; the
        loops are phases where there was one (points are independent)."""
        def decide(text: str, cut: str, above: bool) -> str:
            return _HORIZONTAL_TEST.sub(
                lambda m: m.group(0) if _test_bound(m) != cut else "true" if _test_holds_at_or_above(m) == above else "false",
                text,
            )

        def head(start: str, end: str) -> str:
            return self._layout_loop("for_each_point", layout, hdim, vdim, start, end, v0, v1)

        return zone_loops(text, cuts, decide, head, (h0, h1), self.names.fresh)  # zones alike share (branches.py)

    def _layout_loop(self, helper: str, layout: FieldRef, hdim: str, vdim: str, h0, h1, v0, v1) -> str:
        """A loop helper over `layout`'s own indices (its bounds less its starts), the
        point's indices as GT4Py numbers them defined from them (the starts added back)."""
        dims = [d for d, _ in layout.dims]
        hd, vd = dims.index(hdim), dims.index(vdim)
        name = layout.name
        return (
            f"kiln::{helper}({name}, {h0}@-{name}:{hd}@, {h1}@-{name}:{hd}@, {v0}@-{name}:{vd}@, {v1}@-{name}:{vd}@, "
            f"[&](auto {HR}, kiln::index_t {KR}) {{ const kiln::index_t {H} = {HR}@+{name}:{hd}@, {K} = {KR}@+{name}:{vd}@;"
        )

    def _record_writes(self, targets, ranges) -> None:
        bounds = {dim: (start, end) for dim, _, start, end in ranges}
        for target in targets:
            for d, (dim, kind) in enumerate(target.dims):
                if dim in bounds:
                    self.spans.append((target.name, d, *bounds[dim], "written"))

    def _record_reads(self, reads, ranges) -> None:
        """The ranges an argument is read over at every point of a loop: at the point or a
        constant offset from it (`(k_ + 1)`); reads through tables or in branches are not known."""
        bounds = {H if kind == "h" else K: (start, end) for _, kind, start, end in ranges}
        arguments = {field.name for field, _ in self.fields.values()}
        for name, indices in sorted(reads):
            if name not in arguments:
                continue
            for d, index in enumerate(indices):
                match = re.fullmatch(r"\((h_|k_) ([+-]) (\d+)\)", index)
                point, offset = (match.group(1), int(match.group(2) + match.group(3))) if match else (index, 0)
                if point in bounds:
                    start, end = bounds[point]
                    shift = f" + {offset}" if offset > 0 else f" - {-offset}" if offset else ""
                    self.spans.append((name, d, f"{start}{shift}", f"{end}{shift}", "read"))

    def _writes(self, evaluator, targets, results, pos, scan: str = "") -> list[str]:
        """The point's outputs: every value computed before any is written, as GT4Py
        computes a statement's fields before assigning them (a program may update a field it
        also reads: update_theta_and_exner reads theta_v for exner). An output read at another
        point of the same loop would see values already written there: refused (a scan's
        state, its own output at the level before, is the exception it is made of)."""
        if any(not isinstance(v, Scalar) for v in results):
            self.refuse("an output whose value is not a scalar at each point", "")
        self.written.update(t.name for t in targets)
        for target in targets:
            written = tuple(dict(pos).get(dim) for dim, _ in target.dims)
            for name, indices in evaluator.reads:
                if name == target.name and indices != written and not scan:
                    self.refuse(f"an output ('{name}') read at another point of the statement that writes it", "")
        if len(targets) == 1:
            return [f"{write(targets[0], pos, self)} = {results[0].code};"]
        names = [self.names.fresh("out") for _ in targets]
        lines = [f"const {v.ctype} {n} = {v.code};" for n, v in zip(names, results)]
        return lines + [f"{write(t, pos, self)} = {n};" for t, n in zip(targets, names)]

    def _is_scan(self, expr) -> bool:
        """Whether a statement's expression mentions a scan (cheap, before evaluating it)."""
        from gt4py.next.iterator import ir as itir

        return any(
            str(getattr(n, "id", "")) == "scan" for n in expr.pre_walk_values().if_isinstance(itir.SymRef)
        ) or any(
            any(str(getattr(n, "id", "")) == "scan" for n in f.expr.pre_walk_values().if_isinstance(itir.SymRef))
            for f in self.functions.values()
        )

    def _contains(self, dim: str, start: str, end: str) -> None:
        if start.isidentifier() and end.isidentifier():
            self.contains.setdefault(size_name(dim), (start, end))

    def _template(self, body: str) -> KernelTemplate:
        arrays, scalars = [], []
        for name in self.used:
            if name in self.fields:
                field, position = self.fields[name]
                arrays.append(ArrayDecl(field.name, field.ctype, field.dims, position=position, written=field.name in self.written))
            elif name in self.scalars and name not in self.domain_params:
                cname, ctype, position = self.scalars[name]
                scalars.append(ScalarDecl(cname, ctype, position))
        for tag, table in self.tables.items():
            arrays.append(
                ArrayDecl(table.name, table.ctype, ((table.source, "h"), (table.local, "local")),
                          table=tag, indexes=(size_name(table.target), table.may_skip))
            )
        temporaries = []
        ends = self._temporary_ends
        for field in self.temporaries.values():
            like = next((a for a in arrays if not a.table and a.dims == field.dims), None)
            if like is None:
                self.refuse("a temporary on dimensions no argument has", f"{[d for d, _ in field.dims]}")
            temporaries.append(TemporaryDecl(field.name, field.ctype, like.name, len(field.dims), ends[field.name]))
        params = tuple((self.scalars[p][0], self.scalars[p][2]) for p in self.domain_params)
        sizes = {size_name(dim): None for a in arrays for dim, kind in a.dims if kind != "local"}
        sizes.update({a.indexes[0]: None for a in arrays if a.indexes})
        return KernelTemplate(
            program=self.name,
            arrays=tuple(arrays),
            scalars=tuple(scalars),
            params=params,
            horizontal_params=tuple(self.horizontal_params),
            sizes=tuple((size, self.contains.get(size)) for size in sizes),
            vertical_base=self.vertical_base,
            temporaries=tuple(temporaries),
            body=body,
            same_shapes=tuple(self.same_shapes),
            spans=tuple(self.spans),
        )


class Table:
    def __init__(self, name, source, target, max_neighbors, may_skip, local, ctype):
        self.name, self.source, self.target = name, source, target
        self.max_neighbors, self.may_skip, self.local, self.ctype = max_neighbors, may_skip, local, ctype


def write(field: FieldRef, pos, program) -> str:
    where = dict(pos)
    indices = []
    for dim, kind in field.dims:
        if dim not in where:
            program.refuse(f"an output on {dim} written over a domain without it", field.name)
        indices.append(where[dim])
    return indexed(field.name, field.dims, indices)


def flatten_fields(value) -> list:
    if isinstance(value, Tuple):
        return [leaf for item in value.items for leaf in flatten_fields(item)]
    return [value]


def unflatten_like(shape, leaves):
    it = iter(leaves)

    def go(s):
        if isinstance(s, Tuple):
            return Tuple(tuple(go(i) for i in s.items))
        return next(it)

    return go(shape)


def whole_scan(value):
    """A tuple of a scan's elements in order, `{s[0], s[1]}` (GT4Py's lowering of `a, b =
    scan(...)`), is the scan itself; anything else stays what it is."""
    if isinstance(value, Tuple) and value.items and all(isinstance(v, Projected) for v in value.items):
        scan = value.items[0].whole
        if isinstance(scan, Scan) and all(v.whole is scan and v.index == i for i, v in enumerate(value.items)):
            if len(value.items) == len(flatten_fields(scan.init)):
                return scan
    return value


def dim_kind(dim) -> str:
    return {"HORIZONTAL": "h", "VERTICAL": "v", "LOCAL": "local"}[dim.kind.name]


def ctype_of(type_, refuse) -> str:
    kind = type_.kind.name.lower()
    if kind not in builtins.CTYPES:
        refuse(f"values of type {kind}", "")
    return builtins.CTYPES[kind]
