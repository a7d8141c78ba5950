"""GT4Py programs to kiln kernel text.

Where the translation starts: GTIR, GT4Py's iterator IR of the whole program, after
`apply_common_transforms` with temporaries extracted and reductions unrolled: the IR and the
transforms GT4Py's own C++ backend (gtfn) starts its code generation from. At that point
field operators are fused into one stencil per statement, `concat_where` and `broadcast` are
already rewritten into point-wise conditionals, neighbour reductions are unrolled into
`can_deref`-guarded sums over a table's columns, domains of temporaries are inferred, and
what remains is small (deref, shift, can_deref, if_, arithmetic, tuples, scans): every
construct maps onto kiln's kernel language one to one. Starting earlier (GT4Py's field view
AST) would redo GT4Py's fusion, domain inference and temporary extraction; starting later
(gtfn's IR or its C++) would tie the translation to gridtools' C++ library, which kiln's
prelude does not have and whose templates are what makes gtfn's compiles take tens of
seconds.
"""

from __future__ import annotations

import dataclasses
import hashlib
import pathlib

from ..errors import UnsupportedConstruct
from .template import KernelTemplate


def _source_version() -> str:
    """A hash of this package's sources: a changed translation never reuses a cached one."""
    digest = hashlib.sha256()
    for path in sorted(pathlib.Path(__file__).parent.glob("*.py")):
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


VERSION = _source_version()


def translate(program, arg_types, offset_provider_type) -> KernelTemplate:
    """A kernel template for `program` (GTIR after GT4Py's transforms)."""
    from .program import ProgramTranslation

    name = str(program.id)

    def refuse(construct: str, detail: str = ""):
        raise UnsupportedConstruct(name, construct, detail)

    return ProgramTranslation(program, arg_types, offset_provider_type, refuse).translate()


@dataclasses.dataclass(frozen=True)
class TranslationStep:
    """GT4Py workflow step: CompilableProgramDef -> KernelTemplate (GT4Py's transforms, then
    the translation). `version` keys a persistent cache of its results to this source."""

    version: str = VERSION

    def __call__(self, inp) -> KernelTemplate:
        from gt4py.next.iterator.transforms import pass_manager

        program = inp.data
        offset_provider = inp.args.offset_provider
        ir = pass_manager.apply_common_transforms(
            program, offset_provider=offset_provider, extract_temporaries=True, unroll_reduce=True
        )
        return translate(ir, tuple(inp.args.args), inp.args.offset_provider_type)
