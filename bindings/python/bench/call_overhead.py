"""Call overhead of kiln from Python (issue 21): what a call costs beyond a no-op.

Times, on one set of arrays and interleaved round by round (so that the machine's noise
falls on every way alike):

- ``noop(a, b, c, d)``: a nanobind no-op with Kernel.__call__'s signature (the baseline);
- ``k(a, b, c, d)``: update_theta_and_exner, 4 arrays, on a one-point domain;
- ``bound()``: the same kernel through ``k.bind(a, b, c, d)``, and ``noop()`` beside it;
- the C ABI through ctypes (libkiln_c): the call alone with its kiln_args built beforehand,
  and a hand-written wrapper that builds them from the arrays at each call.

Prints the median time per call of each and its overhead over the baseline. Nothing is
asserted: the figures are for the README.

    python bindings/python/bench/call_overhead.py [--libkiln-c build/bindings/c/libkiln_c.so]
"""

import argparse
import ctypes
import glob
import os
import statistics
import tempfile
import time

import numpy as np

import kiln
from kiln import _kiln

SPEC = dict(horizontal_start=0, horizontal_end=1, vertical_start=0, vertical_end=1, rd_o_cvd=0.4)


def arrays():
    """update_theta_and_exner's arguments on one cell and one level."""
    return (np.full((1, 1), 300.0), np.full((1, 1), 0.9), np.full(1, 0.0), np.full((1, 1), 0.0))


class KilnArg(ctypes.Structure):
    """kiln_arg (bindings/c/include/kiln/kiln.h)."""

    _fields_ = [
        ("data", ctypes.c_void_p),
        ("shape", ctypes.c_int64 * 4),
        ("strides", ctypes.c_int64 * 4),
        ("scalar", ctypes.c_int64),
        ("type", ctypes.c_int32),
        ("rank", ctypes.c_int32),
    ]


KILN_F64 = 1


def kiln_arg_of(array):
    """What a hand-written ctypes wrapper builds per array and call."""
    arg = KilnArg()
    arg.data = array.ctypes.data
    arg.type = KILN_F64
    arg.rank = array.ndim
    for d in range(array.ndim):
        arg.shape[d] = array.shape[d]
        arg.strides[d] = array.strides[d] // array.itemsize
    return arg


class CAbi:
    """update_theta_and_exner resolved and called through the C ABI with ctypes."""

    def __init__(self, path, cache_dir):
        lib = ctypes.CDLL(path)
        lib.kiln_last_error.restype = ctypes.c_char_p
        self.lib = lib
        config, runtime, spec = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_void_p()
        self.check(lib.kiln_config_from_env(ctypes.byref(config)))
        self.check(lib.kiln_config_set_cache_dir(config, cache_dir.encode()))
        self.check(lib.kiln_runtime_create_from_config(config, ctypes.byref(runtime)))
        lib.kiln_config_destroy(config)
        self.check(lib.kiln_spec_create(ctypes.byref(spec)))
        for name, value in SPEC.items():
            if isinstance(value, float):
                self.check(lib.kiln_spec_set_double(spec, name.encode(), ctypes.c_double(value)))
            else:
                self.check(lib.kiln_spec_set_int(spec, name.encode(), ctypes.c_int64(value)))
        self.kernel = ctypes.c_void_p()
        self.check(lib.kiln_kernel_get(runtime, b"update_theta_and_exner", spec, 0, ctypes.byref(self.kernel)))
        lib.kiln_spec_destroy(spec)
        self.runtime = runtime
        lib.kiln_call.argtypes = [ctypes.c_void_p, ctypes.POINTER(KilnArg), ctypes.c_size_t]
        self.call = lib.kiln_call

    def check(self, status):
        if status != 0:
            raise RuntimeError(self.lib.kiln_last_error().decode())

    def close(self):
        self.lib.kiln_runtime_destroy(self.runtime)


def per_call_ns(call, calls):
    """Median-free single measurement: nanoseconds per call over `calls` calls."""
    start = time.perf_counter_ns()
    for _ in range(calls):
        call()
    return (time.perf_counter_ns() - start) / calls


def measure(ways, rounds, calls):
    """{name: median ns per call}, each round running every way once, in turn."""
    samples = {name: [] for name in ways}
    for _ in range(rounds):
        for name, call in ways.items():
            samples[name].append(per_call_ns(call, calls))
    return {name: statistics.median(values) for name, values in samples.items()}


def find_libkiln_c():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    found = sorted(glob.glob(os.path.join(root, "build*", "bindings", "c", "libkiln_c.so")))
    return found[0] if found else None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=21)
    parser.add_argument("--calls", type=int, default=20000, help="calls per way and round")
    parser.add_argument("--libkiln-c", default=find_libkiln_c(), help="libkiln_c.so for the ctypes figures")
    options = parser.parse_args()

    with tempfile.TemporaryDirectory() as cache_dir:
        rt = kiln.Runtime(cache_dir=cache_dir)
        k = rt.kernel("update_theta_and_exner", SPEC)
        a, b, c, d = arrays()
        bound = k.bind(a, b, c, d)
        noop = _kiln._noop
        ways = {
            "noop(a, b, c, d)": lambda: noop(a, b, c, d),
            "k(a, b, c, d)": lambda: k(a, b, c, d),
            "noop()": lambda: noop(),
            "bound()": bound,
        }
        # Calling the lambda costs the same for every way; `bound` is called directly, so
        # its baseline noop() goes through a lambda too: compare with the figures below.
        c_abi = None
        if options.libkiln_c:
            c_abi = CAbi(options.libkiln_c, cache_dir)
            prebuilt = (KilnArg * 4)(*(kiln_arg_of(x) for x in (a, b, c, d)))
            ways["ctypes kiln_call, kiln_args prebuilt"] = lambda: c_abi.call(c_abi.kernel, prebuilt, 4)

            def wrapper(*xs):
                args = (KilnArg * 4)(*(kiln_arg_of(x) for x in xs))
                c_abi.call(c_abi.kernel, args, 4)

            ways["ctypes wrapper, kiln_args per call"] = lambda: wrapper(a, b, c, d)
        for way in ways.values():  # warm: first calls, caches
            per_call_ns(way, 1000)
        ways["bound()"] = lambda: bound()
        medians = measure(ways, options.rounds, options.calls)
        if c_abi:
            c_abi.close()

    print(f"kiln {kiln.__version__}, numpy {np.__version__}; update_theta_and_exner on a one-point domain, "
          f"4 arrays; median of {options.rounds} rounds of {options.calls} calls, interleaved")
    print(f"{'way':40s} {'ns/call':>9s} {'over noop(a, b, c, d)':>22s}")
    base = medians["noop(a, b, c, d)"]
    for name, ns in medians.items():
        print(f"{name:40s} {ns:9.0f} {ns - base:+22.0f}")
    print(f"bound() over noop(): {medians['bound()'] - medians['noop()']:+.0f} ns")
    if not options.libkiln_c:
        print("no libkiln_c.so found (--libkiln-c): ctypes figures left out")


if __name__ == "__main__":
    main()
