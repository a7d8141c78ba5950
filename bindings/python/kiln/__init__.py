"""kiln from Python: specialise, compile and cache stencil kernels, call them on NumPy arrays.

    import kiln, numpy as np
    rt = kiln.Runtime()                       # settings from the KILN_* variables, or Runtime(cache_dir=...)
    k = rt.kernel("update_theta_and_exner", horizontal_start=0, horizontal_end=n, vertical_start=0,
                  vertical_end=nlev, rd_o_cvd=0.4)
    k(theta_v, exner, area, z_temp)           # NumPy arrays, any order or strides, never copied
    step = k.bind(theta_v, exner, area, z_temp)
    step()                                    # the fast path for repeated calls on the same arrays

kiln.Cache(cache_dir=...) administers a cache folder: entries(), records(), stats(), read(key),
verify(), gc(max_bytes), clear(), reindex(), as `kiln cache` does.

Errors are kiln.Error and its subclasses, one per C++ class (kiln/errors.hpp).
"""

from ._kiln import (
    Argument,
    Bound,
    Cache,
    CacheBuildRecipe,
    CacheClearReport,
    CacheEntry,
    CacheEntryFile,
    CacheGcReport,
    CacheRecord,
    CacheReindexReport,
    CacheStats,
    CacheVerifyReport,
    Communicator,
    Declaration,
    Kernel,
    Mode,
    Parameter,
    Request,
    Runtime,
    __version__,
    parse_byte_size,
)
from .errors import (
    ArgumentError,
    CompileError,
    Error,
    GpuError,
    KernelSourceError,
    LoadError,
    SpecError,
    ToolchainError,
    UnknownKernelError,
)

__all__ = [
    "Argument",
    "ArgumentError",
    "Bound",
    "Cache",
    "CacheBuildRecipe",
    "CacheClearReport",
    "CacheEntry",
    "CacheEntryFile",
    "CacheGcReport",
    "CacheRecord",
    "CacheReindexReport",
    "CacheStats",
    "CacheVerifyReport",
    "CompileError",
    "Communicator",
    "Declaration",
    "Error",
    "GpuError",
    "Kernel",
    "KernelSourceError",
    "LoadError",
    "Mode",
    "Parameter",
    "Request",
    "Runtime",
    "SpecError",
    "ToolchainError",
    "UnknownKernelError",
    "__version__",
    "parse_byte_size",
]
