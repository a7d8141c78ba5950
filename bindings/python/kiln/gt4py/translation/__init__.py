"""GT4Py programs to kiln kernel text.

Where the translation starts: GTIR, GT4Py's iterator IR of the whole program, as GT4Py's
front end lowers it (`past_to_itir`), and only when that fails, the same IR after GT4Py's
`apply_common_transforms` (temporaries extracted, reductions unrolled: what GT4Py's own C++
backend, gtfn, generates code from).

Why GTIR: it is GT4Py's one IR of a whole program (field operators, scans, domains,
connectivities) and what every GT4Py backend consumes; its constructs (as_fieldop, deref,
shift, can_deref, neighbors/reduce, if_, concat_where, tuples, scan) map onto kiln's kernel
language one to one. Starting earlier (the field-view AST) would redo GT4Py's lowering;
starting later (gtfn's IR or its C++) would tie the translation to gridtools' C++ library,
which kiln's prelude does not have and whose templates make gtfn's compiles take tens of
seconds.

Why before GT4Py's transforms by default: the translation evaluates every statement at one
point, inlining each field operator into its readers as it goes, which is the fusion that
GT4Py's transforms do, done as a by-product; and those transforms take 3-22 s per diffusion
program in Python on this 2-core machine (calculate_nabla4 13 s, apply_diffusion_to_vn 22 s,
measured under load), against milliseconds for the translation. A scan that another
expression reads, which cannot be inlined, is computed first into a kiln temporary over the
levels its readers need (scan_temporaries.py); a construct the direct translation still
refuses is retried after the transforms.
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

    try:
        return ProgramTranslation(program, arg_types, offset_provider_type, refuse).translate()
    except UnsupportedConstruct as refused:
        if "scan" not in refused.construct:
            raise
        # A scan another expression reads: computed first into a temporary (scan_temporaries.py).
        from .scan_temporaries import rewrite

        try:
            rewritten = rewrite(program, offset_provider_type, refuse)
        except UnsupportedConstruct:
            raise
        except Exception as error:  # noqa: BLE001: an IR shape it does not follow is a refusal (the fallback runs)
            raise UnsupportedConstruct(
                name, "a scan read inside another expression, in a form scan_temporaries.py does not follow",
                f"{type(error).__name__}: {error}"[:200],
            ) from error
        if rewritten is None:
            raise
    return ProgramTranslation(rewritten, arg_types, offset_provider_type, refuse).translate()


@dataclasses.dataclass(frozen=True)
class TranslationStep:
    """GT4Py workflow step: CompilableProgramDef -> KernelTemplate. `gt4py_transforms`:
    "fallback" (translate GT4Py's IR as lowered, retry after its transforms on a refusal),
    "always" or "never". `version` keys a persistent cache of its results to this source."""

    gt4py_transforms: str = "fallback"
    version: str = VERSION

    def __call__(self, inp) -> KernelTemplate:
        from gt4py.next.iterator.transforms import pass_manager

        arg_types, offset_provider_type = tuple(inp.args.args), inp.args.offset_provider_type
        if self.gt4py_transforms != "always":
            try:
                return translate(inp.data, arg_types, offset_provider_type)
            except UnsupportedConstruct:
                if self.gt4py_transforms == "never":
                    raise
        ir = pass_manager.apply_common_transforms(
            inp.data, offset_provider=inp.args.offset_provider, extract_temporaries=True, unroll_reduce=True
        )
        return translate(ir, arg_types, offset_provider_type)
