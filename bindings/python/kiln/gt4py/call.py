"""Calling a translated program: GT4Py's arguments to a kiln kernel, nothing copied.

One `KilnProgram` per program and offset provider (GT4Py keeps one per variant). A call
takes each field's `.ndarray` (GT4Py's NumPy buffer, any layout), the offset provider's
tables and the scalars, and looks up the kiln kernel for its signature: the domain bounds'
values and every array's shape and strides. The first call of a signature finishes the
kernel text (extents), registers it and asks kiln for the kernel specialised on the bounds
(those chosen `run_time` stay run-time values of one binary) and on the strides; later calls
of that signature are a dictionary lookup and kiln's own call; a call with the very field
objects of the call before (a time loop) goes straight to kiln's bound call. A bool field (a
mask) goes in as a kiln bool array, read and written where it lies, as every other field.
"""

from __future__ import annotations

import operator

import kiln

from .translation.template import KernelTemplate, python_bound, with_extents, with_starts


class KilnProgram:
    def __init__(
        self, template: KernelTemplate, runtime, mode: str, run_time, sources: dict | None = None, comm=None
    ):
        self.template = template
        self.runtime = runtime
        self.mode = mode
        self.run_time = run_time
        self.comm = comm  # an mpi4py communicator: kernels resolved collectively (kiln.mpi)
        if comm is not None:
            self._kernel = self._agreeing(self._kernel)
        self._fields = tuple(a.position for a in template.arrays if not a.table)
        self._tables = tuple(a.table for a in template.arrays if a.table)
        self._scalars = tuple(s.position for s in template.scalars)
        self._params = tuple(position for _, position in template.params)
        self._kernels: dict = {}
        self._registered: set[str] = set()
        self._sources = sources if sources is not None else {}
        self._last = None  # (domain values, field objects, offset provider, kiln.Bound)
        self._get_fields, self._get_params, self._get_scalars = map(getter, (self._fields, self._params, self._scalars))

    def __call__(self, *args, offset_provider, out=None, **_):
        if out is not None:
            args = (*args, out)
        fields, params, scalars = self._get_fields(args), self._get_params(args), self._get_scalars(args)
        last = self._last
        # The same field objects as the last call (a time loop): kiln's bound call, which
        # re-reads each array's pointer, shape and strides itself.
        if (
            last is not None
            and last[0] == params
            and last[2] is offset_provider
            and all(map(operator.is_, fields, last[1]))
        ):
            last[3](*scalars)
            return
        arrays = self._arrays(fields, offset_provider)
        starts = self._starts(fields, offset_provider)
        key = (params, starts, *[(a.shape, a.strides, a.dtype.char) for a in arrays])
        kernel = self._kernels.get(key)
        if kernel is None:
            kernel = self._kernels[key] = self._kernel(arrays, params, starts)
        bound = kernel.bind(*arrays, *scalars)
        self._last = (params, fields, offset_provider, bound)
        bound(*scalars)

    def _arrays(self, fields, offset_provider) -> list:
        return [f.ndarray for f in fields] + [offset_provider[t].ndarray for t in self._tables]

    def _starts(self, fields, offset_provider) -> tuple:
        """Where each array's domain starts along each dimension: GT4Py numbers a field's
        points from there, kiln an array's from 0 (template.py subtracts the difference)."""
        if self._tables:
            fields = (*fields, *[offset_provider[t] for t in self._tables])
        return tuple([r.start for f in fields for r in f.domain.ranges])  # flat: the cheapest to build and hash

    def precompile(self, args, offset_provider, arch: str, compiler: str = "cuda") -> str:
        """Compiles the kernel these arguments would call for a GPU (`arch` of NVRTC's or
        hipRTC's, `compiler` "cuda" or "hip") into kiln's cache, nothing launched; returns
        its cache key."""
        fields, params = self._get_fields(args), self._get_params(args)
        arrays = self._arrays(fields, offset_provider)
        name, values, run_time, strides_of = self._request(arrays, params, self._starts(fields, offset_provider))
        return self.runtime.precompile(
            name, values, gpu=arch, backend=compiler, mode=self.mode, run_time=run_time, strides_of=strides_of
        )

    def _kernel(self, arrays, params, starts):
        """The kiln kernel for a new signature."""
        name, values, run_time, strides_of = self._request(arrays, params, starts)
        if self.comm is None:
            return self.runtime.kernel(name, values, mode=self.mode, run_time=run_time, strides_of=strides_of)
        # A collective: every rank of comm is here, at its first call of a new signature of this
        # program, in the same order of programs (docs/manual/gt4py.md, "On many ranks").
        request = kiln.Request(name, values, mode=self.mode, run_time=run_time, strides_of=strides_of)
        return self._collectively(request)

    def _collectively(self, request):
        """kiln's collective resolution of `request`, once every rank has said it got this far."""
        refusals = self.comm.allgather(None)
        self._agreed = True
        for rank, refusal in enumerate(refusals):
            if refusal is not None:
                raise kiln.Error(
                    f"kiln.gt4py: program '{self.template.program}': rank {rank} refused its call "
                    f"before the collective resolution: {refusal}"
                )
        return self.runtime.kernels([request], self.comm)[0]

    def _agreeing(self, kernel):
        """`kernel` (self._kernel) on many ranks: a rank that refuses its call before kiln's
        collective (the checks here, a request kiln cannot make) says so in _collectively's
        agreement, which the others wait in, so that every rank raises (this one its own error,
        the others kiln.Error naming it) and none is left waiting in kiln's collective."""

        def agreeing(*args):
            self._agreed = False
            try:
                return kernel(*args)
            except Exception as error:
                if not self._agreed:
                    self.comm.allgather(f"{type(error).__name__}: {error}")
                raise

        return agreeing

    def _request(self, arrays, params, starts):
        """What kiln is asked for a new signature: the text finished and registered once,
        the kernel's name, its values, those read at run time, the arrays fixing strides."""
        template = self.template
        shapes = {a.name: array.shape for a, array in zip(template.arrays, arrays)}
        flat = iter(starts)
        starts = {a.name: tuple(next(flat) for _ in a.dims) for a in template.arrays}
        values = {name: int(value) for (name, _), value in zip(template.params, params)}
        start_values = template.start_values(starts)
        values.update(start_values)
        bounds = Bounds(template, shapes, starts, values)
        self._check_temporaries(bounds)
        self._check_spans(bounds)
        for group in template.same_shapes:
            if len({shapes[name] for name in group}) > 1:
                raise ValueError(
                    f"kiln.gt4py: program '{template.program}': the outputs {list(group)} of one scan "
                    f"must have one shape, got {[shapes[name] for name in group]}"
                )
        name, text = template.render(shapes, starts)
        if name not in self._registered:
            if name not in self.runtime.kernel_names():
                self.runtime.register_kernel(text, f"{name}.kiln")
            self._registered.add(name)
            self._sources[name] = text
        run_time = []
        if self.mode != "generic":
            if self.run_time == "all":
                run_time = list(values)
            elif self.run_time == "horizontal":
                run_time = [p for p in template.horizontal_params if p in values]
                run_time += [p for p, (_, kind) in start_kinds(template, starts).items() if kind == "h"]
            elif self.run_time not in ("none", None):
                # Names of domain parameters, and of fields: a field named has its starts read at run time.
                run_time = [p for p in self.run_time if p in values]
                run_time += [p for p, (field, _) in start_kinds(template, starts).items() if field in self.run_time]
        strides_of = {a.name: array for a, array in zip(template.arrays, arrays)}
        return name, values, run_time, strides_of

    def _check_temporaries(self, bounds: "Bounds") -> None:
        """A temporary spans its `like` array: refuse a call whose domain reaches beyond it."""
        for temporary in self.template.temporaries:
            for dim, end in temporary.ends:
                reach = bounds.value(end)
                first, extent = bounds.span(temporary.like, dim)
                if reach > first + extent:
                    raise ValueError(
                        f"kiln.gt4py: program '{self.template.program}': a temporary reaches "
                        f"{reach} along dimension {dim}, beyond its layout '{temporary.like}' "
                        f"(extent {extent}{f' from {first}' if first else ''})"
                    )

    def _check_spans(self, bounds: "Bounds") -> None:
        """What each loop writes, and reads at every point, must lie in the array's domain, as
        GT4Py's embedded execution requires. kiln's own checks see a loop's range, not the
        offsets it reads at (`a(K - 1)` over levels from 0 reads before the array), and do not
        apply where a domain does not start at 0 (template.py): checked here for every new
        signature of a call (the bound and repeated calls reuse it)."""
        like = {t.name: t.like for t in self.template.temporaries}
        for name, dim, start, end, how in self.template.spans:
            first, last = bounds.value(start), bounds.value(end)
            origin, extent = bounds.span(like.get(name, name), dim)
            if first < last and (first < origin or last > origin + extent):
                raise ValueError(
                    f"kiln.gt4py: program '{self.template.program}': '{name}' is {how} over "
                    f"[{first}, {last}) along its dimension {dim}, outside its domain [{origin}, {origin + extent})"
                )


_BOUNDS: dict = {}  # a bound's Python text -> its code: compiled once per process


class Bounds:
    """Domain bounds of one call as numbers: the translation's C++ bound expressions (+ - min
    max of parameters, literals, field extents and starts) evaluated as Python."""

    def __init__(self, template: KernelTemplate, shapes, starts, values):
        self.shapes, self.starts, self.values = shapes, starts, dict(values)
        self.params_of = template.start_params(starts)

    def value(self, code: str) -> int:
        # Most bounds are one domain parameter (`horizontal_start`): looked up, not compiled.
        if code in self.values:
            return self.values[code]
        bound = python_bound(with_extents(with_starts(code, self.params_of), self.shapes))
        compiled = _BOUNDS.get(bound)
        if compiled is None:
            if len(_BOUNDS) >= 4096:  # extents are in the text: one per signature, kept bounded
                _BOUNDS.clear()
            compiled = _BOUNDS[bound] = compile(bound, "<bound>", "eval")
        return eval(compiled, {"__builtins__": {}, "min": min, "max": max}, dict(self.values))

    def span(self, array: str, dim: int) -> tuple[int, int]:
        """(first index as GT4Py numbers it, extent) of `array` along dimension `dim`."""
        return int(self.starts[array][dim]), self.shapes[array][dim]


def start_kinds(template: KernelTemplate, starts) -> dict[str, tuple[str, str]]:
    """Each start parameter of a call: (its array, the dimension's kind 'h' or 'v')."""
    return {
        f"{a.name}_start{d}_": (a.name, kind)
        for a in template.arrays
        for d, ((_, kind), start) in enumerate(zip(a.dims, starts[a.name]))
        if start
    }


def getter(positions: tuple[int, ...]):
    """args -> the tuple of args at `positions` (operator.itemgetter, a tuple for any count)."""
    if not positions:
        return lambda args: ()
    if len(positions) == 1:
        (p,) = positions
        return lambda args: (args[p],)
    return operator.itemgetter(*positions)
