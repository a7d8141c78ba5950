"""The translation cache's key for a program, from what GT4Py has before it lowers it.

A warm first call looks its translation up by this key and skips GT4Py's lowering
(``past_to_gtir``) and the fingerprint of the lowered IR, which took 0.1-0.5 s per diffusion
program on the 2-core VM. The key must change whenever the translation could, so it covers
  - every DSL function the program reaches (the program's, its field operators', theirs):
    the digest of its source file (any edit of the file gives a new key), its qualified name
    and first line, its annotations and defaults, and the value of every name its source or
    code mentions that resolves in its globals, builtins or closure (constants, dimensions,
    offsets, type aliases, other field operators, attributes of modules it names);
  - the stage's own settings (grid type, a scan's axis, direction and initial value);
  - GT4Py's compile-time arguments: argument types, static arguments, the column axis, and the
    offset provider's type (each table's dimensions, dtype, neighbours per entry, skip value;
    not its row count: the kernel text writes extents relative to the call's sizes);
  - a salt: the translation's sources, this module's, GT4Py's version, the backend's options.
Values are written out by `repr` only for kinds whose repr is their whole value (numbers,
strings, enums, GT4Py's type specifications and typing constructs); a value of any other kind
raises NotKeyable, and such a program is translated in every process instead of risking a stale
translation. Nothing is memoised but file digests (checked against mtime and size): a global
rebound between two calls gives a new key.
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import os
import re
import sys
import types
import typing

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Libraries whose objects are named, not walked: their behaviour is fixed by their version, which
# is in the salt (GT4Py's) or does not reach the translation (NumPy's types are named by class).
_LIBRARIES = ("gt4py.", "numpy", "builtins", "typing", "collections", "math")
_SCALARS = (type(None), bool, int, float, complex, str, bytes)


class NotKeyable(Exception):
    """A program reaches a value whose content this module cannot write out."""


def program_key(definition_stage, compile_time_args, salt: str) -> str:
    """A hex digest identifying the translation of `definition_stage` for these arguments."""
    from gt4py.next import common

    writer = _Writer()
    writer.value(definition_stage)
    args = compile_time_args
    provider_type = common.offset_provider_to_type(args.offset_provider) if args.offset_provider else {}
    for part in (tuple(args.args), args.kwargs, args.column_axis, args.argument_descriptor_contexts, provider_type):
        writer.value(part)
    return writer.digest(salt)


def definition_key(definition_stage) -> str:
    """A hex digest of the definition alone: what GT4Py's parse (func_to_past) depends on."""
    writer = _Writer()
    writer.value(definition_stage)
    return writer.digest("definition")


def module_digest() -> str:
    """This module's source: a change to the key's recipe gives new keys."""
    return _file_digest(__file__)


class _Writer:
    """Writes a value's content as strings; functions once per key (recursion, repeats)."""

    def __init__(self):
        self.parts: list[str] = []
        self._visited: dict[int, int] = {}  # id of a function or dataclass instance -> its ordinal
        self._namespaces: set[tuple[int, frozenset[str]]] = set()  # (module or class, names) written
        # Walks of what may change between two keys (a namespace, a DSL function, a dataclass
        # instance) so far: an alias whose writing made none is fixed (_FIXED).
        self._volatile = 0

    def digest(self, salt: str) -> str:
        digest = hashlib.blake2b(salt.encode(), digest_size=20)
        digest.update("\0".join(self.parts).encode())
        return digest.hexdigest()

    def value(self, value, names: frozenset[str] = frozenset()) -> None:
        add = self.parts.append
        kind = type(value)
        how = _HOW.get(kind) or _how(kind)
        if how == "scalar":
            add(f"{kind.__qualname__}:{value!r}")
        elif how == "alias":  # typing's Field[Dims[Cell, K], float64]: origin and arguments
            if not self._fixed(value):
                start, volatile = len(self.parts), self._volatile
                add(f"alias:{_qualified_name(typing.get_origin(value))}[")
                for argument in typing.get_args(value):
                    self.value(argument, names)
                add("]")
                if self._volatile == volatile:  # library types and dimensions only: fixed
                    _FIXED[id(value)] = (value, tuple(self.parts[start:]))
        elif how == "repr":  # immutable, and its repr is its content: written once per process
            memo = _REPRS.get(id(value))
            if memo is None or memo[0] is not value:
                memo = _REPRS[id(value)] = (value, f"repr:{value!r}")
            add(memo[1])
        elif how == "sequence":
            items = sorted(value, key=repr) if isinstance(value, (set, frozenset)) else value
            add(f"{kind.__qualname__}[{len(items)}")
            for item in items:
                self.value(item, names)
            add("]")
        elif how == "dict":
            add(f"dict[{len(value)}")
            for key in sorted(value, key=repr):
                add(repr(key))
                self.value(value[key], names)
            add("]")
        elif how == "function":
            self.function(value)
        elif how == "module":
            if value.__name__.startswith(_LIBRARIES):
                add(f"module:{value.__name__}")
            else:
                self.namespace(value, names)
        elif how == "class":
            if self._fixed(value):
                pass
            elif _in_library(value):
                add(written := f"named:{_qualified_name(value)}")
                _FIXED[id(value)] = (value, (written,))
            else:
                self.namespace(value, names)
        elif how == "dataclass":
            self._volatile += 1
            add(f"dataclass:{_qualified_name(kind)}")
            if self._again(value):
                return
            for name in _fields(kind):
                add(name)
                self.value(getattr(value, name), names)
        elif how == "named":
            add(f"named:{_qualified_name(value)}")
        else:
            raise NotKeyable(f"a value of type {_qualified_name(kind)}")

    def _fixed(self, value) -> bool:
        """True, having written it, if `value` (a typing alias or a library's class) was written
        before in this process and wrote nothing that can change (see _FIXED)."""
        memo = _FIXED.get(id(value))
        if memo is None or memo[0] is not value:
            return False
        self.parts.extend(memo[1])
        return True

    def _again(self, value) -> bool:
        """True, having written which one, if `value` was written before in this key (a repeat,
        or a cycle); else numbers it."""
        ordinal = self._visited.get(id(value))
        if ordinal is not None:
            self.parts.append(f"again:{ordinal}")
            return True
        self._visited[id(value)] = len(self._visited)
        return False

    def namespace(self, value, names: frozenset[str]) -> None:
        """A module or a user's class: only the attributes the referring code names
        (`dims.EdgeDim` names `dims` and `EdgeDim`)."""
        self._volatile += 1
        self.parts.append(f"namespace:{_qualified_name(value) if isinstance(value, type) else value.__name__}")
        if (id(value), names) in self._namespaces:  # another set of names writes other attributes
            return
        self._namespaces.add((id(value), names))
        content = vars(value)
        for name in sorted(names):
            if name in content:
                self.parts.append(name)
                self.value(content[name], names)

    def function(self, function: types.FunctionType) -> None:
        """A DSL function: its source file's digest and location, annotations, and the values of
        the names it mentions. Functions of GT4Py or NumPy are named instead."""
        if _in_library(function):
            self.parts.append(f"named:{_qualified_name(function)}")
            return
        self._volatile += 1
        if self._again(function):
            return
        code = function.__code__
        self.parts.append(f"function:{code.co_filename}:{_file_digest(code.co_filename)}:"
                          f"{function.__qualname__}:{code.co_firstlineno}")  # fmt: skip
        names = _mentioned_names(code)
        self.value(function.__annotations__, names)
        self.value(function.__defaults__, names)
        self.value(function.__kwdefaults__, names)
        scope = function.__globals__
        builtins = scope.get("__builtins__", {})
        builtins = vars(builtins) if isinstance(builtins, types.ModuleType) else builtins
        closure = dict(zip(code.co_freevars, (c.cell_contents for c in function.__closure__ or ())))
        for name in sorted(names):
            for namespace, label in ((closure, "closure"), (scope, "global"), (builtins, "builtin")):
                if name in namespace:
                    self.parts.append(f"{label}:{name}")
                    self.value(namespace[name], names)
                    break


_NAMES: dict[types.CodeType, tuple[str, frozenset[str]]] = {}  # code -> (its file's digest, names)


def _mentioned_names(code: types.CodeType) -> frozenset[str]:
    """Every identifier of the function's source lines and its code objects' names: a
    superset of what GT4Py resolves (it reads global names from the source, and evaluates
    local variable annotations, which leave no trace in the byte code). Kept per code object
    and file digest: neither changes what the other gives."""
    digest = _file_digest(code.co_filename)
    memo = _NAMES.get(code)
    if memo is not None and memo[0] == digest:
        return memo[1]
    names: set[str] = set()
    last = code.co_firstlineno
    stack = [code]
    while stack:
        current = stack.pop()
        names.update(current.co_names, current.co_freevars)
        last = max([last, *(line for _, _, line in current.co_lines() if line is not None)])
        stack.extend(c for c in current.co_consts if isinstance(c, types.CodeType))
    lines = _file_lines(code.co_filename)
    names.update(_IDENTIFIER.findall("".join(lines[code.co_firstlineno - 1 : last])))
    _NAMES[code] = (digest, frozenset(names))
    return _NAMES[code][1]


_files: dict[str, tuple[int, int, str, list[str]]] = {}  # path -> mtime_ns, size, digest, lines


def _file_entry(path: str) -> tuple[str, list[str]]:
    try:
        status = os.stat(path)
    except OSError as error:
        raise NotKeyable(f"source file {path!r}: {error.strerror}") from None
    entry = _files.get(path)
    if entry is None or entry[:2] != (status.st_mtime_ns, status.st_size):
        with open(path, "rb") as file:
            data = file.read()
        text = data.decode("utf-8", errors="replace")
        entry = _files[path] = (status.st_mtime_ns, status.st_size, hashlib.blake2b(data).hexdigest(),
                                text.splitlines(keepends=True))  # fmt: skip
    return entry[2], entry[3]


def _file_digest(path: str) -> str:
    return _file_entry(path)[0]


def _file_lines(path: str) -> list[str]:
    return _file_entry(path)[1]


_HOW: dict[type, str] = {}  # class -> how its values are written (see _how)
_REPRS: dict[int, tuple[object, str]] = {}  # id -> (the object, kept alive; its repr)
# id -> (the object, kept alive; what it writes): typing aliases whose arguments are library
# types, dimensions and other fixed aliases (Field[Dims[Cell, K], float64], 128 of the ~680
# values apply_diffusion_to_theta_and_exner's key writes, each with its arguments), and library
# classes (named). Immutable, or fixed by the library's version: written once per process.
_FIXED: dict[int, tuple[object, tuple[str, ...]]] = {}
_FIELDS: dict[type, tuple[str, ...]] = {}


def _how(kind: type) -> str:
    """How values of `kind` are written: by repr (scalars; immutable values whose repr is
    their content: GT4Py's dimensions, offsets and type specifications, typing's
    constructs), walked (containers, dataclasses, DSL functions, modules and classes of the
    user), named (a library's function or class), or refused."""
    from gt4py.next import common
    from gt4py.next.ffront import fbuiltins

    numpy = sys.modules.get("numpy")
    if kind in _SCALARS or issubclass(kind, enum.Enum) or numpy is not None and issubclass(kind, numpy.generic):
        how = "scalar"
    elif kind.__module__ == "typing" and kind.__name__ in ("_GenericAlias", "_UnionGenericAlias") or kind in (
        types.GenericAlias,
        types.UnionType,
    ):
        how = "alias"
    elif (
        kind in (common.Dimension, fbuiltins.FieldOffset)
        or kind.__module__ in ("typing", "typing_extensions")
        or kind.__module__.startswith("gt4py.next.type_system")
    ):
        how = "repr"
    elif issubclass(kind, (tuple, list, set, frozenset)):
        how = "sequence"
    elif issubclass(kind, dict):
        how = "dict"
    elif kind is types.FunctionType:
        how = "function"
    elif kind is types.ModuleType:
        how = "module"
    elif issubclass(kind, type):
        how = "class"
    elif dataclasses.is_dataclass(kind):
        how = "dataclass"
    elif kind in (types.BuiltinFunctionType, types.MethodDescriptorType):
        how = "named"
    else:
        how = "refused"
    _HOW[kind] = how
    return how


def _fields(kind: type) -> tuple[str, ...]:
    """A dataclass's fields but those GT4Py marks as not changing a lowering (a program's
    backend: `gt4py_metadata(fingerprint=False)`)."""
    names = _FIELDS.get(kind)
    if names is None:
        from gt4py.next import utils

        def fingerprinted(field):
            gt4py_metadata = field.metadata.get(utils.GT4PY_CLASS_METADATA_NS)
            return not gt4py_metadata or gt4py_metadata.get("fingerprint", True)

        names = _FIELDS[kind] = tuple(f.name for f in dataclasses.fields(kind) if fingerprinted(f))
    return names


def _in_library(value) -> bool:
    return (getattr(value, "__module__", None) or "").startswith(_LIBRARIES)


def _qualified_name(value) -> str:
    return f"{getattr(value, '__module__', '?')}.{getattr(value, '__qualname__', type(value).__qualname__)}"

