"""What the GT4Py backend refuses: a construct its translation does not handle.

Raised at translation, before any kernel is compiled, so a program kiln cannot run is never
run wrongly. A kiln.Error like every other error of the package.
"""

from ..errors import Error


class UnsupportedConstruct(Error):
    """A GT4Py program uses a construct the translation to kiln does not support.

    `program` is the program's name, `construct` names the construct (a GT4Py builtin, an IR
    node or a feature such as 'scan with a non-output state'); the message says both.
    """

    def __init__(self, program: str, construct: str, detail: str = ""):
        self.program = program
        self.construct = construct
        message = f"kiln.gt4py: program '{program}' uses {construct}, which kiln does not translate"
        super().__init__(message + (f": {detail}" if detail else ""))

    def __reduce__(self):  # picklable: GT4Py may carry the error across its compile pool
        return (type(self), (self.program, self.construct))
