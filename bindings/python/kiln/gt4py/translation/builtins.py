"""GT4Py's arithmetic and math builtins as C++ on kiln's prelude.

Math goes through kiln's prelude (kiln::sin, kiln::sqrt, ... for double, kiln::sinf, ...
for float: C's names), which is libm's functions on the CPU and CUDA's or HIP's on a GPU, so
one translation compiles for both (clang's __builtin_sin, which NVRTC lacks, would not).
Integer floor division and modulo follow Python (and NumPy), which GT4Py's embedded
execution uses, not C++'s truncation.
"""

from __future__ import annotations

import re

from .values import Scalar

CTYPES = {
    "float64": "double",
    "float32": "float",
    "int32": "int32_t",
    "int64": "int64_t",
    "int8": "int8_t",
    "bool": "bool",
}
KILN_TYPES = {"double": "double", "float": "float", "int32_t": "int32", "int64_t": "int64", "bool": "bool"}

BINARY_OPERATORS = {
    "plus": "+",
    "minus": "-",
    "multiplies": "*",
    "divides": "/",
    "eq": "==",
    "not_eq": "!=",
    "less": "<",
    "less_equal": "<=",
    "greater": ">",
    "greater_equal": ">=",
}
COMPARISONS = {"eq", "not_eq", "less", "less_equal", "greater", "greater_equal"}
# GT4Py's names to C's, where they differ; the others are C's already.
MATH_UNARY = {
    "sqrt": "sqrt", "exp": "exp", "log": "log",
    "sin": "sin", "cos": "cos", "tan": "tan", "arcsin": "asin", "arccos": "acos", "arctan": "atan",
    "sinh": "sinh", "cosh": "cosh", "tanh": "tanh", "arcsinh": "asinh", "arccosh": "acosh",
    "arctanh": "atanh", "cbrt": "cbrt", "floor": "floor", "ceil": "ceil", "trunc": "trunc",
    "gamma": "tgamma",
}
PREDICATES = {"isfinite", "isinf", "isnan"}


# A value bound before (v3_, true) or a field read at the point itself (mask(h_, k_), with
# the field's start subtracted where the template marks it: k_@-mask:1@): in bounds wherever
# the point is, as the call's extent checks ensure.
AT_THE_POINT = re.compile(r"\w+(\([hk]_(@-\w+:\d@)?(, [hk]_(@-\w+:\d@)?)*\))?")


def is_float(ctype: str) -> bool:
    return ctype in ("double", "float")


def prelude_math(name: str, ctype: str) -> str:
    """kiln::sin for double, kiln::sinf for float (the prelude's, lang/prelude/70_math.hpp)."""
    return f"kiln::{name}{'f' if ctype == 'float' else ''}"


def apply(name: str, args: list[Scalar], refuse) -> Scalar | None:
    """C++ for builtin `name` on scalar arguments, or None when `name` is not arithmetic.
    `refuse(construct, detail)` raises UnsupportedConstruct."""
    if name in BINARY_OPERATORS:
        a, b = args
        ctype = "bool" if name in COMPARISONS else a.ctype
        return Scalar(f"({a.code} {BINARY_OPERATORS[name]} {b.code})", ctype)
    if name == "neg":
        return Scalar(f"(-{args[0].code})", args[0].ctype)
    if name == "not_":
        return Scalar(f"(!{args[0].code})", "bool")
    if name in ("and_", "or_", "xor_"):
        a, b = args
        if a.ctype == "bool":
            # Where b cannot fail to read (a value, a field at the point), & and | read it
            # unconditionally: x86 has no masked load of one byte, so `a && mask(h_)` on a bool
            # array became one branch per lane (add_extra_diffusion_for_w_con_approaching_cfl's
            # kernel 3x slower than on int32 masks). b may be a neighbour's read that a guards.
            strict = AT_THE_POINT.fullmatch(b.code) is not None
            op = {"and_": "&" if strict else "&&", "or_": "|" if strict else "||", "xor_": "!="}[name]
            return Scalar(f"bool({a.code} {op} {b.code})" if strict else f"({a.code} {op} {b.code})", "bool")
        op = {"and_": "&", "or_": "|", "xor_": "^"}[name]
        return Scalar(f"{a.ctype}({a.code} {op} {b.code})", a.ctype)
    if name in ("minimum", "maximum"):
        a, b = args
        fn = "kiln::min" if name == "minimum" else "kiln::max"
        return Scalar(f"{fn}<{a.ctype}>({a.code}, {b.code})", a.ctype)
    if name == "abs":
        (a,) = args
        if is_float(a.ctype):
            return Scalar(f"{prelude_math('fabs', a.ctype)}({a.code})", a.ctype)
        return Scalar(f"({a.code} < 0 ? -{a.code} : {a.code})", a.ctype)
    if name in MATH_UNARY:
        (a,) = args
        if not is_float(a.ctype):
            refuse(f"'{name}' on {a.ctype}", "math builtins take floating-point values")
        return Scalar(f"{prelude_math(MATH_UNARY[name], a.ctype)}({a.code})", a.ctype)
    if name in PREDICATES:
        (a,) = args  # a float widens to double exactly: NaN and infinity stay what they are
        return Scalar(f"kiln::{name}({a.code})", "bool")
    if name == "power":
        a, b = args
        if is_float(a.ctype):
            return Scalar(f"{prelude_math('pow', a.ctype)}({a.code}, {a.ctype}({b.code}))", a.ctype)
        refuse("'power' on integers", "")
    if name == "fmod":
        a, b = args
        if not is_float(a.ctype):
            refuse("'fmod' on integers", "")
        return Scalar(f"{prelude_math('fmod', a.ctype)}({a.code}, {a.ctype}({b.code}))", a.ctype)
    if name in ("mod", "floordiv"):
        a, b = args
        if is_float(a.ctype):
            refuse(f"'{name}' on floating-point values", "")
        q, r = f"({a.code} / {b.code})", f"({a.code} % {b.code})"
        negative = f"(({r} != 0) && (({a.code} < 0) != ({b.code} < 0)))"
        if name == "floordiv":
            return Scalar(f"{a.ctype}({q} - {negative})", a.ctype)
        return Scalar(f"{a.ctype}({r} + ({negative} ? {b.code} : 0))", a.ctype)
    return None
