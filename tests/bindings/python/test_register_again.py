"""Issue 33, item 11: a kernel name registered again in one Runtime. A new text
replaces the kernel (its arguments too) for later requests; Kernels made before
keep their binary and their arguments."""

import numpy as np

import kiln

TWICE = """#pragma kiln kernel py_register_again
#pragma kiln array double y[n]
#pragma kiln domain start end
#pragma kiln size n contains start end
kiln::for_each_column(start, end, [&](kiln::index_t c) { y(c) *= 2.0; });
"""

FROM_X = """#pragma kiln kernel py_register_again
#pragma kiln array double y[n]
#pragma kiln array double x[n]
#pragma kiln domain start end
#pragma kiln size n contains start end
kiln::for_each_column(start, end, [&](kiln::index_t c) { y(c) = 3.0 * x(c); });
"""


def test_a_new_text_replaces_the_kernel_and_old_kernels_keep_theirs(tmp_path):
    rt = kiln.Runtime(cache_dir=str(tmp_path / "cache"))
    assert rt.register_kernel(TWICE, "twice.kiln") == "py_register_again"
    old = rt.kernel("py_register_again", start=0, end=4)
    assert rt.register_kernel(TWICE, "twice.kiln") == "py_register_again"  # the same text: nothing changes
    assert rt.register_kernel(FROM_X, "from_x.kiln") == "py_register_again"
    new = rt.kernel("py_register_again", start=0, end=4)
    y, x = np.ones(4), np.full(4, 5.0)
    new(y, x)
    np.testing.assert_array_equal(y, np.full(4, 15.0))
    old(y)  # one argument, the old binary
    np.testing.assert_array_equal(y, np.full(4, 30.0))
    assert [a.name for a in rt.declaration("py_register_again").arguments] == ["y", "x"]
