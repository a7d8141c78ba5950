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
translation.

What is kept within a process, never on disk (a global rebound between two calls still gives a
new key):
  - a definition's walk, with a journal of every read whose result could change (a namespace's
    or a function's globals' names, present or not; a function's attributes and closure cells;
    a dataclass's fields; a dict's or a list's items; a source file's mtime and size).
    `definition_key` walks a definition when GT4Py parses the program (`with_backend`, or the
    decorator); `program_key`, at the first call, replays the journal (identity checks, 0.16
    ms for apply_diffusion_to_theta_and_exner against 0.5-1 ms for the walk) and walks again
    if one read differs;
  - an offset provider entry's type, by what it follows from (a connectivity's class and each
    field's class and value, its table's dtype and shape): equal tables of a grid, in every
    program's new provider, are written once;
  - file digests, by mtime and size; a DSL function's mentioned names, by code and file digest.
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import keyword
import operator
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
    args = compile_time_args
    writer = _Writer()  # a walk of its own: what the definition's walk met does not shorten it
    for part in (tuple(args.args), args.kwargs, args.column_axis, args.argument_descriptor_contexts):
        writer.value(part)
    writer.parts += _provider_parts(args.offset_provider or {})
    digest = hashlib.blake2b(salt.encode(), digest_size=20)
    digest.update(_definition_digest(definition_stage))
    digest.update("\0".join(writer.parts).encode())
    return digest.hexdigest()


def definition_key(definition_stage) -> str:
    """A hex digest of the definition alone: what GT4Py's parse (func_to_past) depends on."""
    return _definition_digest(definition_stage).hex()


# id of a definition stage -> (the stage, kept alive; the digest of its walk; the walk's journal)
_DEFINITIONS: dict[int, tuple[object, bytes, list[tuple]]] = {}


def _definition_digest(definition_stage) -> bytes:
    """The digest of what the definition's walk writes: this process's last walk of the same
    stage where every read of its journal still gives the same object, else a new walk."""
    memo = _DEFINITIONS.get(id(definition_stage))
    if memo is not None and memo[0] is definition_stage and _holds(memo[2]):
        return memo[1]
    writer = _Writer(journal=[])
    writer.value(definition_stage)
    digest = hashlib.blake2b("\0".join(writer.parts).encode(), digest_size=32).digest()
    _DEFINITIONS[id(definition_stage)] = (definition_stage, digest, writer.journal)
    return digest


# An offset provider entry's stamp -> what its type writes (at most _ENTRIES_KEPT of them)
_ENTRIES: dict[tuple, tuple[str, ...]] = {}
_ENTRIES_KEPT = 4096


def _provider_parts(offset_provider) -> list[str]:
    """The offset provider's type: each entry's name and type (a table's dimensions, dtype,
    neighbours per entry, skip value), each type written by a walk of its own."""
    from gt4py.next import common

    parts = [f"provider[{len(offset_provider)}"]
    for name in sorted(offset_provider, key=repr):
        entry = offset_provider[name]
        parts.append(repr(name))
        stamp = _stamp(entry)
        try:
            written = _ENTRIES.get(stamp) if stamp is not None else None
        except TypeError:  # a field that cannot be hashed: not kept
            written = stamp = None
        if written is None:
            written = _connectivity_parts(entry)
            if written is None:
                writer = _Writer()
                writer.value(common.offset_provider_to_type({name: entry})[name])
                written = writer.parts
            written = tuple(written)
            if stamp is not None:
                if len(_ENTRIES) >= _ENTRIES_KEPT:
                    _ENTRIES.clear()
                _ENTRIES[stamp] = written
        parts += written
    parts.append("]")
    return parts


# A connectivity class -> whether its type is GT4Py's own `Connectivity.__gt_type__` (None: not
# a connectivity, or one that writes its own type: walked generically).
_DIRECT: dict[type, bool] = {}
_CONNECTIVITY_TYPES: tuple = ()  # GT4Py's, once imported (see _connectivity_types)


def _connectivity_types() -> tuple:
    """The horizontal and local dimension kinds, GT4Py's neighbour and other connectivity types."""
    global _CONNECTIVITY_TYPES
    from gt4py.next import common

    _CONNECTIVITY_TYPES = (common.DimensionKind.HORIZONTAL, common.DimensionKind.LOCAL,
                           common.NeighborConnectivityType, common.ConnectivityType)  # fmt: skip
    return _CONNECTIVITY_TYPES


def _connectivity_parts(entry) -> list[str] | None:
    """What the generic walk of `offset_provider_to_type` writes for a connectivity, written
    from the same properties `Connectivity.__gt_type__` reads (domain dims, codomain, dtype,
    skip value, the table's width): without building the type, GT4Py's `Connectivity`
    protocol check (0.1 ms at its first use in a process) or the type's dataclass walk (25-30
    µs a table the first time, 14 tables in the first program). Each field's value is written
    by the generic writer, so the parts are the walk's (test_program_key proves it for every
    connectivity kind of GT4Py 1.2.3); None for another kind of entry, or a type whose fields
    are not the ones known here (another GT4Py): walked generically."""
    kind = type(entry)
    direct = _DIRECT.get(kind)
    if direct is None:
        direct = _DIRECT[kind] = _writes_gt_type(kind)
    if not direct:
        return None
    horizontal, local, neighbour_type, other_type = _CONNECTIVITY_TYPES or _connectivity_types()
    dims = entry.domain.dims
    # Connectivity.__gt_type__'s choice (common.is_neighbor_table, its isinstance being true)
    neighbours = len(dims) == 2 and dims[0].kind is horizontal and dims[1].kind is local
    type_kind = neighbour_type if neighbours else other_type
    codomain, skip_value, dtype = entry.codomain, entry.skip_value, entry.dtype
    width = entry.ndarray.shape[1] if neighbours else None
    values = {"domain": dims, "codomain": codomain, "skip_value": skip_value, "dtype": dtype}
    if neighbours:
        values["max_neighbors"] = width
    fields = _fields(type_kind)
    if len(fields) != len(values) or not all(name in values for name in fields):
        return None
    writer = _Writer()
    writer.parts.append(f"dataclass:{_qualified_name(type_kind)}")
    writer._visited[-1] = 0  # the type's ordinal, as the walk numbers it (nothing refers to it)
    for name in fields:
        writer.parts.append(name)
        if name == "dtype":
            writer.parts += _dtype_parts(dtype)
        else:
            writer.value(values[name])
    return writer.parts


# ids of a dtype's class and field values -> (them, kept alive; what the dtype's walk writes)
_DTYPES: dict[tuple, tuple[tuple, tuple[str, ...]]] = {}


def _dtype_parts(dtype) -> tuple[str, ...]:
    """What a walk of `dtype` (GT4Py's DType, a frozen dataclass: a NumPy scalar class and a
    tuple) writes, 11 µs: kept by its class and its field values, compared by identity (a new
    DType in each call of the `dtype` property, of the same class and values)."""
    kind = type(dtype)
    if not dataclasses.is_dataclass(kind):
        writer = _Writer()
        writer.value(dtype)
        return tuple(writer.parts)
    getter = _FIELD_VALUES.get(kind)
    if getter is None:
        getter = _FIELD_VALUES[kind] = operator.attrgetter("__class__", *_fields(kind))
    held = getter(dtype)
    key = tuple(map(id, held))
    memo = _DTYPES.get(key)
    if memo is None or not _same(memo[0], held):
        writer = _Writer()
        writer.value(dtype)
        if len(_DTYPES) >= _ENTRIES_KEPT:
            _DTYPES.clear()
        memo = _DTYPES[key] = (held, tuple(writer.parts))
    return memo[1]


def _writes_gt_type(kind: type) -> bool:
    """True for a nominal subclass of GT4Py's Connectivity (no protocol check) whose type is
    Connectivity's own `__gt_type__`."""
    from gt4py.next import common

    return common.Connectivity in kind.__mro__ and getattr(kind, "__gt_type__", None) is common.Connectivity.__gt_type__


def _stamp(entry) -> tuple | None:
    """What an offset provider entry's type follows from, for a frozen dataclass (GT4Py's
    connectivities): its class and each field's class and value, a NumPy table by its dtype
    and shape (its rows are not in the type); None for another kind of entry, written every
    time. Equal stamps give equal types: GT4Py's type of a connectivity is made of its fields
    and its table's dtype and shape."""
    kind = type(entry)
    params = getattr(kind, "__dataclass_params__", None)
    if params is None or not params.frozen:
        return None
    numpy = sys.modules.get("numpy")
    stamp = [kind]
    for value in _field_getter(kind)(entry)[1:]:
        if numpy is not None and type(value) is numpy.ndarray:
            stamp.append((numpy.ndarray, value.dtype, value.shape))
        else:
            stamp.append((type(value), value))
    return tuple(stamp)


_FIELD_GETTERS: dict[type, operator.attrgetter] = {}


def _field_getter(kind: type):
    """kind -> a getter of all of its dataclass fields as a tuple (with the class first, so
    that it is a tuple for one field too)."""
    getter = _FIELD_GETTERS.get(kind)
    if getter is None:
        getter = _FIELD_GETTERS[kind] = operator.attrgetter("__class__", *(f.name for f in dataclasses.fields(kind)))
    return getter


def module_digest() -> str:
    """This module's source: a change to the key's recipe gives new keys."""
    return _file_digest(__file__)


class _Writer:
    """Writes a value's content as strings; functions once per key (recursion, repeats). With a
    journal (a list), also appends a check of each read whose result could change (_holds)."""

    def __init__(self, journal: list | None = None):
        self.parts: list[str] = []
        self.journal = journal
        self._visited: dict[int, int] = {}  # id of a function or dataclass instance -> its ordinal
        self._namespaces: set[tuple[int, frozenset[str]]] = set()  # (module or class, names) written
        # Walks of what may change between two keys (a namespace, a DSL function, a dataclass
        # instance) so far: an alias whose writing made none is fixed (_FIXED).
        self._volatile = 0

    def digest(self, salt: str) -> str:
        digest = hashlib.blake2b(salt.encode(), digest_size=20)
        digest.update("\0".join(self.parts).encode())
        return digest.hexdigest()

    def _read(self, check, *args) -> None:
        if self.journal is not None:
            self.journal.append((check, args))

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
            if not isinstance(value, (tuple, frozenset)):  # a list or a set: its items can change
                self._read(_items_hold, value, tuple(value))
            items = sorted(value, key=repr) if isinstance(value, (set, frozenset)) else value
            add(f"{kind.__qualname__}[{len(items)}")
            for item in items:
                self.value(item, names)
            add("]")
        elif how == "dict":
            self._read(_dict_holds, value, tuple(value), tuple(value.values()))
            add(f"dict[{len(value)}")
            for key in sorted(value, key=repr):
                add(repr(key))
                self.value(value[key], names)
            add("]")
        elif how == "function":
            self.function(value)
        elif how == "module":
            content = vars(value)
            self._read(_lookups_hold, content, ("__name__",), (content.get("__name__", _MISSING),))
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
                self._read(_attributes_hold, value, _CLASS_NAMES, _CLASS_NAMES(value))
                self.namespace(value, names)
        elif how == "dataclass":
            self._volatile += 1
            add(f"dataclass:{_qualified_name(kind)}")
            if self._again(value):
                return
            fields = _fields(kind)
            getter = _FIELD_VALUES.get(kind)
            if getter is None:
                getter = _FIELD_VALUES[kind] = operator.attrgetter("__class__", *fields)
            values = getter(value)
            self._read(_attributes_hold, value, getter, values)
            for name, field_value in zip(fields, values[1:]):
                add(name)
                self.value(field_value, names)
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
        ordered = tuple(sorted(names))
        values = tuple([content.get(name, _MISSING) for name in ordered])
        self._read(_lookups_hold, content, ordered, values)
        for name, attribute in zip(ordered, values):
            if attribute is not _MISSING:
                self.parts.append(name)
                self.value(attribute, names)

    def function(self, function: types.FunctionType) -> None:
        """A DSL function: its source file's digest and location, annotations, and the values of
        the names it mentions. Functions of GT4Py or NumPy are named instead."""
        if self.journal is not None:  # what the checks below and _in_library read
            self._read(_attributes_hold, function, _FUNCTION_ATTRIBUTES, _FUNCTION_ATTRIBUTES(function))
        if _in_library(function):
            self.parts.append(f"named:{_qualified_name(function)}")
            return
        self._volatile += 1
        if self._again(function):
            return
        code = function.__code__
        digest = _file_digest(code.co_filename)
        if self.journal is not None:
            self._read(_file_holds, code.co_filename, _files[code.co_filename][:2])
        self.parts.append(f"function:{code.co_filename}:{digest}:{function.__qualname__}:{code.co_firstlineno}")
        names, ordered = _mentioned_names(code)
        self.value(function.__annotations__, names)
        self.value(function.__defaults__, names)
        self.value(function.__kwdefaults__, names)
        scope = function.__globals__
        builtins = scope.get("__builtins__", {})
        builtins = vars(builtins) if isinstance(builtins, types.ModuleType) else builtins
        cells = function.__closure__ or ()
        contents = tuple([_cell_contents(cell) for cell in cells])
        closure = dict(zip(code.co_freevars, contents))
        # The closure's names first, then the globals', then the builtins' (for names the
        # globals lack): each read once, and journaled as read.
        unclosed = tuple([name for name in ordered if name not in closure]) if closure else ordered
        found_globals = [scope.get(name, _MISSING) for name in unclosed]
        unbound = tuple([name for name, found in zip(unclosed, found_globals) if found is _MISSING])
        found_builtins = [builtins.get(name, _MISSING) for name in unbound]
        if self.journal is not None:
            self._read(_cells_hold, cells, contents)
            self._read(_lookups_hold, scope, ("__builtins__", *unclosed), (scope.get("__builtins__", _MISSING), *found_globals))
            self._read(_lookups_hold, builtins, unbound, tuple(found_builtins))
        found = {name: ("builtin", value) for name, value in zip(unbound, found_builtins) if value is not _MISSING}
        found.update((name, ("global", value)) for name, value in zip(unclosed, found_globals) if value is not _MISSING)
        found.update((name, ("closure", value)) for name, value in closure.items() if name in names)
        for name in sorted(found):
            label, value = found[name]
            if value is _MISSING:  # an empty cell: GT4Py finds no value there either
                self.parts.append(f"unbound:{name}")
                continue
            self.parts.append(f"{label}:{name}")
            self.value(value, names)


# ---- the journal's checks: each is true while the read it stands for gives what it gave ----

_MISSING = object()  # a name a namespace did not have
_CLASS_NAMES = operator.attrgetter("__module__", "__qualname__")
# What a function's walk reads of it: its code, names, annotations, defaults, globals, closure.
_FUNCTION_ATTRIBUTES = operator.attrgetter(
    "__code__", "__module__", "__qualname__", "__annotations__", "__defaults__", "__kwdefaults__", "__globals__",
    "__closure__",
)  # fmt: skip
_FIELD_VALUES: dict[type, operator.attrgetter] = {}  # dataclass -> getter of (class, *fields)


def _holds(journal: list[tuple]) -> bool:
    """True if every read of a walk's journal still gives what it gave."""
    for check, args in journal:
        if not check(*args):
            return False
    return True


def _same(values, others) -> bool:
    """The same objects, one by one."""
    return len(values) == len(others) and all(map(operator.is_, values, others))


def _lookups_hold(mapping, names: tuple, values: tuple) -> bool:
    get = mapping.get
    return _same([get(name, _MISSING) for name in names], values)


def _attributes_hold(value, getter, values: tuple) -> bool:
    return _same(getter(value), values)


def _items_hold(container, items: tuple) -> bool:
    return _same(tuple(container), items)


def _dict_holds(mapping, keys: tuple, values: tuple) -> bool:
    return _same(tuple(mapping), keys) and _same(tuple(mapping.values()), values)


def _cells_hold(cells: tuple, contents: tuple) -> bool:
    return _same([_cell_contents(cell) for cell in cells], contents)


def _cell_contents(cell):
    try:
        return cell.cell_contents
    except ValueError:  # an empty cell (a name bound later in the enclosing function)
        return _MISSING


def _file_holds(path: str, stamp: tuple[int, int]) -> bool:
    try:
        status = os.stat(path)
    except OSError:
        return False
    return (status.st_mtime_ns, status.st_size) == stamp


# code -> (its file's digest, names, the names sorted)
_NAMES: dict[types.CodeType, tuple[str, frozenset[str], tuple[str, ...]]] = {}


def _mentioned_names(code: types.CodeType) -> tuple[frozenset[str], tuple[str, ...]]:
    """Every identifier of the function's source lines and its code objects' names (and them
    sorted): a superset of what GT4Py resolves (it reads global names from the source, and
    evaluates local variable annotations, which leave no trace in the byte code). Kept per code
    object and file digest: neither changes what the other gives."""
    digest = _file_digest(code.co_filename)
    memo = _NAMES.get(code)
    if memo is not None and memo[0] == digest:
        return memo[1], memo[2]
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
    names.difference_update(keyword.kwlist)  # `def`, `return`, `None`: never a name GT4Py looks up
    _NAMES[code] = (digest, frozenset(names), tuple(sorted(names)))
    return _NAMES[code][1], _NAMES[code][2]


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

