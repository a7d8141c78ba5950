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

from .translation.template import KernelTemplate, python_bound, with_extents


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
        arrays = [f.ndarray for f in fields] + [offset_provider[t].ndarray for t in self._tables]
        key = (params, *[(a.shape, a.strides, a.dtype.char) for a in arrays])
        kernel = self._kernels.get(key)
        if kernel is None:
            kernel = self._kernels[key] = self._kernel(args, arrays, params)
        bound = kernel.bind(*arrays, *scalars)
        self._last = (params, fields, offset_provider, bound)
        bound(*scalars)

    def _kernel(self, args, arrays, params):
        """The kiln kernel for a new signature: text finished, registered once, requested."""
        template = self.template
        for position in self._fields:
            domain = getattr(args[position], "domain", None)
            if domain is not None and any(r.start != 0 for r in domain.ranges):
                raise ValueError(
                    f"kiln.gt4py: program '{template.program}': argument {position} starts at "
                    f"{[r.start for r in domain.ranges]}; kiln takes fields whose domain starts at 0"
                )
        shapes = {a.name: array.shape for a, array in zip(template.arrays, arrays)}
        values = {name: int(value) for (name, _), value in zip(template.params, params)}
        self._check_temporaries(shapes, values)
        for group in template.same_shapes:
            if len({shapes[name] for name in group}) > 1:
                raise ValueError(
                    f"kiln.gt4py: program '{template.program}': the outputs {list(group)} of one scan "
                    f"must have one shape, got {[shapes[name] for name in group]}"
                )
        name, text = template.render(shapes)
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
            elif self.run_time not in ("none", None):
                run_time = [p for p in self.run_time if p in values]
        strides_of = {a.name: array for a, array in zip(template.arrays, arrays)}
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

    def _check_temporaries(self, shapes, values) -> None:
        """A temporary spans its `like` array: refuse a call whose domain reaches beyond it."""
        for temporary in self.template.temporaries:
            for dim, end in temporary.ends:
                bound = python_bound(with_extents(end, shapes))  # + - min max of parameters and literals
                reach = eval(bound, {"__builtins__": {}, "min": min, "max": max}, dict(values))
                if reach > shapes[temporary.like][dim]:
                    raise ValueError(
                        f"kiln.gt4py: program '{self.template.program}': a temporary reaches "
                        f"{reach} along dimension {dim}, beyond its layout '{temporary.like}' "
                        f"(extent {shapes[temporary.like][dim]})"
                    )



def getter(positions: tuple[int, ...]):
    """args -> the tuple of args at `positions` (operator.itemgetter, a tuple for any count)."""
    if not positions:
        return lambda args: ()
    if len(positions) == 1:
        (p,) = positions
        return lambda args: (args[p],)
    return operator.itemgetter(*positions)
