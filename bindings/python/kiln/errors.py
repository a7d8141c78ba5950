"""What kiln raises: Error and one subclass per C++ class of kiln/errors.hpp, the same tree.

Every message names the kernel and, where there is one, the parameter or argument and what
was expected. The extension (kiln._kiln) raises these classes for the C++ exceptions.
"""


class Error(RuntimeError):
    """Base of every error kiln raises (C++ kiln::Error)."""


class UnknownKernelError(Error):
    """No kernel of that name is registered; the message lists those that are."""


class KernelSourceError(Error):
    """A kernel text is malformed (its #pragma kiln lines), or its name is taken."""


class SpecError(Error):
    """A specialisation value is missing, unknown or of the wrong type; names the parameter."""


class ArgumentError(Error):
    """A call's argument count, dtype, rank, shape (the declared extents) or strides are not
    what the kernel takes; names the argument."""


class CompileError(Error):
    """The kernel does not compile.

    ``diagnostics`` holds the compiler's messages, with the lines of the kernel's own text,
    or the cause when the compiler crashed, ran out of memory or out of time.
    """

    def __init__(self, message: str, diagnostics: str = "") -> None:
        super().__init__(message)
        self.diagnostics = diagnostics


class ToolchainError(Error):
    """The compiler (its module, its worker, clang's resource folder) is missing or broken."""


class LoadError(Error):
    """A compiled kernel does not load into this process (names the kernel and the cause)."""


class GpuError(Error):
    """No GPU driver or device, or the driver refused."""
