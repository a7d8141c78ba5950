"""A loop body's branches, simplified as text: tests made constant by a cut decided, and the
lines both sides of an `if` start with computed once, before it; and the zones of a cut loop
(`zone_loops`, below), those whose bodies come out alike written once.

A loop cut at a horizontal bound (program.py's _cut_loops) writes the body's tests of the
horizontal index as the constants they are in that part: `if ((false && true)) {` around
a neighbour-of-neighbour sum, 28 such tests in compute_rho_theta_pgrad_and_update_vn. Clang
parsed and lowered both sides of each before dropping one. `simplified` folds `true` and
`false` in an `if`'s test and keeps only the side that runs.

Once a side is kept inline, the `if` around it may hold the same work on both sides. Both
sides start with the same lines (the same C++ but for the names each declares), which every
point runs whichever side it takes: they are written once before the `if`, the rest of the
else side renamed to the then side's names. stencil.py shares what both sides of a choice
compute as it evaluates them (`_choose`, `_share`), which now covers icon4py's w diffusion
(its nabla4 on both sides of `0 < k < nrdmax`); this pass still shortens 5 of the 109 icon4py
programs' texts, where a side holds nested choices or relied on its test:
compute_advection_in_corrector_vertical_momentum 36.1 -> 22.8 KB, the predictor's 42.8 ->
36.0 KB, apply_diffusion_to_vn, compute_averaged_vn_and_fluxes and
compute_rho_theta_pgrad_and_update_vn by 36-54 bytes. Nothing is read that was
not read at that point before, and every value is the same C++ expression as before, so the
results are the same bit for bit.

Only `if` statements are touched. A ternary's test is left as written: `(X && false) ? a : b`
made `b` would hand `b` to clang as an operand of the expression around it, where a
multiply-add could be contracted that is not now. The text is the translation's own (one
statement or brace per line, `{` ending a line that opens a block, `}` starting one that
closes it); a block of another shape is left as it is.
"""

from __future__ import annotations

import re
from typing import Callable

_IF = re.compile(r"(\s*)if \((.*)\) \{")
_NAME = re.compile(r"\b[a-z]+\d+_\b")  # a name of the translation's (stencil.Names.fresh)
_DECLARED = re.compile(r"\s*(?:const )?[\w:<>]+ ([a-z]+\d+_)(?: =|;)")  # a line declaring one
_ASSIGNED = re.compile(r"\s*([^=;]*?) = ")  # a line assigning to something (or declaring it)
CONSTANTS = ("true", "false")


def simplified(lines: list[str]) -> list[str]:
    """`lines` (a loop body) with constant tests folded, dead sides dropped and the lines both
    sides of an `if` start with written once before it."""
    declared: dict[str, int] = {}
    for line in lines:
        if (m := _DECLARED.match(line)) is not None:
            declared[m.group(1)] = declared.get(m.group(1), 0) + 1
    once = {name for name, count in declared.items() if count == 1}
    return _hoisted(_decided(lines, once), once)


# ---- tests ------------------------------------------------------------------------------
def fold(test: str) -> str:
    """A test with `true` and `false` folded: `(X && false)` is `false`, `(X && true)` is `X`,
    `(!true)` is `false`, and so for `||`. The translation's tests have no side effects (reads
    and comparisons), so leaving X unevaluated changes nothing. Unchanged if nothing folds."""
    code = test.strip()
    if code in CONSTANTS:
        return code
    for op in ("||", "&&"):  # the loosest first
        parts = _split(code, op)
        if parts is None:
            return test  # a ?: or a comma at the top: not folded
        if len(parts) > 1:
            folded = [fold(p) for p in parts]
            absorbing, neutral = ("true", "false") if op == "||" else ("false", "true")
            if absorbing in folded:
                return absorbing
            kept = [p for p in folded if p != neutral]
            if kept == parts:
                return test
            if not kept:
                return neutral
            return kept[0] if len(kept) == 1 else "(" + f" {op} ".join(kept) + ")"
    if code.startswith("(") and _closing(code, 0) == len(code) - 1:
        inner = fold(code[1:-1])
        if inner in CONSTANTS:
            return inner
        if inner == code[1:-1]:
            return test
        return inner if inner.startswith("(") and _closing(inner, 0) == len(inner) - 1 else f"({inner})"
    if code.startswith("!") and not code.startswith("!="):
        operand = fold(code[1:])
        if operand in CONSTANTS:
            return "false" if operand == "true" else "true"
        return test if operand == code[1:] else f"!{operand}"
    return test


def _split(code: str, op: str) -> list[str] | None:
    """`code` split at `op` where no bracket is open; None if a `?` or `,` is there."""
    parts, depth, start, i = [], 0, 0, 0
    while i < len(code):
        c = code[i]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif depth == 0 and c in "?,":
            return None
        elif depth == 0 and code.startswith(op, i):
            parts.append(code[start:i].strip())
            start = i = i + len(op)
            continue
        i += 1
    parts.append(code[start:].strip())
    return parts


def _closing(code: str, at: int) -> int:
    """The index of the bracket closing the one at `at`, or -1."""
    depth = 0
    for i in range(at, len(code)):
        depth += (code[i] in "([{") - (code[i] in ")]}")
        if depth == 0:
            return i
    return -1


# ---- blocks -----------------------------------------------------------------------------
def _sides(lines: list[str], at: int):
    """The `if` opening at lines[at]: (then lines, else lines or None, index of its closing
    line), or None where the block is not of the translation's shape."""
    depth, middle = 0, None
    for j in range(at, len(lines)):
        line = lines[j].strip()
        if j > at and depth == 1 and line == "} else {" and middle is None:
            middle = j
            continue
        if j > at and depth == 1 and line == "}":
            if middle is None:
                return lines[at + 1 : j], None, j
            return lines[at + 1 : middle], lines[middle + 1 : j], j
        depth += line.count("{") - line.count("}")
        if depth <= 0:
            return None
    return None


def _inline(block: list[str], once: set[str]) -> list[str]:
    """A kept side's lines in place of its `if`; inside braces of their own where a name it
    declares is declared elsewhere in the body too."""
    names = [m.group(1) for line in block if (m := _DECLARED.match(line))]
    if all(name in once for name in names):
        return block
    indent = block[0][: len(block[0]) - len(block[0].lstrip())] if block else ""
    return [f"{indent}{{", *block, f"{indent}}}"]


def _decided(lines: list[str], once: set[str]) -> list[str]:
    out, work, i = [], list(lines), 0
    while i < len(work):
        line = work[i]
        m = _IF.fullmatch(line)
        if m is not None:
            test = fold(m.group(2))
            sides = _sides(work, i) if test in CONSTANTS else None
            if sides is not None:
                then, otherwise, end = sides
                kept = then if test == "true" else otherwise or []
                work[i : end + 1] = _inline(kept, once)
                continue  # the kept lines are looked at in turn
            if test != m.group(2):
                line = f"{m.group(1)}if ({test}) {{"
        out.append(line)
        i += 1
    return out


def _hoisted(lines: list[str], once: set[str]) -> list[str]:
    out, i = [], 0
    while i < len(lines):
        line = lines[i]
        m = _IF.fullmatch(line)
        sides = _sides(lines, i) if m is not None else None
        if sides is None:
            out.append(line)
            i += 1
            continue
        then, otherwise, end = sides
        then = _hoisted(then, once)
        if otherwise is None:
            out += [line, *then, _closing_line(line)]
        else:
            otherwise = _hoisted(otherwise, once)
            shared, then, otherwise = _shared_start(then, otherwise, once)
            out += shared
            if then or otherwise:
                out += [line, *then]
                if otherwise:
                    out += [_closing_line(line) + " else {", *otherwise]
                out.append(_closing_line(line))
        i = end + 1
    return out


def _closing_line(opening: str) -> str:
    return opening[: len(opening) - len(opening.lstrip())] + "}"


def _shared_start(then: list[str], otherwise: list[str], once: set[str]):
    """(the lines both sides start with, the then side's rest, the else side's rest renamed):
    the longest run of whole statements and blocks alike but for the names they declare,
    whose every declared name is declared nowhere else in the body, and which assigns only
    to names it declares (the `if`'s test, evaluated before it, may read any other)."""
    rename: dict[str, str] = {}
    depth, taken, own = 0, 0, set()
    for k, (a, b) in enumerate(zip(then, otherwise)):
        assigned = _ASSIGNED.match(a)
        if assigned is not None and _DECLARED.match(a) is None and assigned.group(1).strip() not in own:
            break
        b = _renamed(b, rename)
        ma, mb = _DECLARED.match(a), _DECLARED.match(b)
        if ma is not None and mb is not None and ma.group(1) != mb.group(1):
            if ma.group(1) not in once or mb.group(1) not in once:
                break
            b = _renamed(b, {mb.group(1): ma.group(1)})
            if a != b:
                break
            rename[mb.group(1)] = ma.group(1)
        elif a != b or (ma is not None and ma.group(1) not in once):
            break
        if ma is not None:
            own.add(ma.group(1))
        depth += a.count("{") - a.count("}")
        if depth < 0:
            break
        if depth == 0:
            taken = k + 1
    if taken == 0:
        return [], then, otherwise
    names = {m.group(1) for line in otherwise[:taken] if (m := _DECLARED.match(line))}
    rename = {old: new for old, new in rename.items() if old in names}
    return then[:taken], then[taken:], [_renamed(line, rename) for line in otherwise[taken:]]


def _renamed(line: str, rename: dict[str, str]) -> str:
    return _NAME.sub(lambda m: rename.get(m.group(0), m.group(0)), line) if rename else line


# ---- zones ------------------------------------------------------------------------------
def zone_loops(
    text: str,
    cuts: list[str],
    decide: Callable[[str, str, bool], str],
    head: Callable[[str, str], str],
    bounds: tuple[str, str],
    fresh: Callable[[str], str],
) -> str:
    """A point loop over `bounds` whose body is `text`, cut at each bound of `cuts` (in order)
    into zones, each zone's body `text` with `decide(text, cut, above)` writing the tests of
    that bound as the constants they are there, then `simplified`. `head(start, end)` is the
    loop's opening line up to and with its lambda's `{`; `fresh(prefix)` a new C++ name.

    Neighbouring zones whose bodies came out the same are one loop: the cut decided nothing
    that is left. Zones that are not neighbours but have the same body (icon4py's w
    diffusion copies w_old below its interior zone and above its halo bound, 3 of its 4
    zones) share one named lambda: clang instantiates the loop helper once for it, and so
    optimises and generates that loop's code once, where it had done it for each zone (the
    helper was already a function of its own for each, not inlined into the kernel). Every
    point runs the body it ran before, so the results are the same bit for bit."""
    zones = _zones(text, cuts, decide, bounds)
    uses: dict[tuple[str, ...], int] = {}
    for _, body in zones:
        uses[body] = uses.get(body, 0) + 1
    named: dict[tuple[str, ...], str] = {}
    out = []
    for (start, end), body in zones:
        opening = head(start, end)
        if uses[body] == 1:
            out += [opening, *("  " + line for line in body), "});"]
            continue
        at = opening.index("[&](")
        if body not in named:
            named[body] = fresh("zone")
            out += [f"const auto {named[body]} = {opening[at:]}", *("  " + line for line in body), "};"]
        out.append(f"{opening[:at]}{named[body]});")
    return "\n".join(out)


def _zones(text: str, cuts: list[str], decide, bounds: tuple[str, str]) -> list[tuple[tuple[str, str], tuple[str, ...]]]:
    """[((start, end), body lines)] in order: the parts of `bounds` cut at `cuts`, the last
    part below a cut and the first from it on joined where their bodies are the same (their
    ranges meet at the cut: kiln::split gives [start, x) and [x, end), x clamped into them)."""
    if not cuts:
        return [(bounds, tuple(simplified(text.split("\n"))))]
    cut, rest = cuts[0], cuts[1:]
    split = f"kiln::split({{{bounds[0]}, {bounds[1]}}}, {cut})"
    below, above = (
        _zones(decide(text, cut, side), rest, decide, (f"{split}.{part}.start", f"{split}.{part}.end"))
        for part, side in (("below", False), ("at_above", True))
    )
    (last_range, last_body), (first_range, first_body) = below[-1], above[0]
    if last_body != first_body:
        return below + above
    joined = ((bounds[0] if len(below) == 1 else last_range[0]), (bounds[1] if len(above) == 1 else first_range[1]))
    return below[:-1] + [(joined, last_body)] + above[1:]
