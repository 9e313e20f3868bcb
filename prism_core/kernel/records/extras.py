"""The builtin ops beyond the Array API standard's families, declared as data: ``convolve``,
``random.normal``, and the gradient ops ``requires_grad`` and ``detach``.

One :class:`~prism_core.kernel.oprecord.OpRecord` per op (``oprecord.py`` says what each
field means and who reads it).  A pure module: it imports nothing of Prism but ``oprecord`` and no
array library.
"""

from __future__ import annotations

from prism_core.kernel.oprecord import FLOATING, OpRecord

__all__ = ["ROWS"]

ROWS: tuple[OpRecord, ...] = (
    OpRecord(
        "convolve",
        '(a, v, /, mode="full")',
        """the discrete linear convolution of the 1-D arrays ``a`` and ``v``, as NumPy's
        ``convolve`` (not in the Array API): ``mode`` is ``"full"`` (length ``N + M - 1``),
        ``"same"`` (length ``max(N, M)``) or ``"valid"`` (only where the arrays overlap
        completely, length ``max(N, M) - min(N, M) + 1``); empty operands are a ``ValueError``.""",
        (0, 1), "own", "array", "prism_core._builtin.numpy_ops:convolve",
        aliases=("convolution",), standard=False,
    ),
    OpRecord(
        "random.normal",
        "(shape, mean=0.0, std=1.0, *, seed=None, dtype=float64)",
        """an array of ``shape`` drawn from the normal distribution with that ``mean`` and standard
        deviation ``std`` (not in the Array API). The same integer ``seed`` gives the same
        numbers on every call (and the same numbers, rounded, in every floating-point
        ``dtype``); ``seed=None`` draws fresh entropy. ``dtype`` must be a real floating-point
        type.""",
        (), "create", "array", "prism_core._builtin.numpy_ops:random_normal",
        standard=False, dtypes=(),
    ),
    OpRecord(
        "requires_grad",
        "(x, /, flag=True)",
        """``x`` with gradient tracking switched on (``flag=True``) or off for the backend's
        autograd (torch's ``requires_grad_``), the op of the numerics hook
        ``Backend.requires_grad`` (not in the Array API nor NumPy). A backend without autograd,
        NumPy among them, returns ``x`` itself, unchanged: ``value_and_grad`` then
        differentiates by central finite differences.""",
        (0,), "view", "array", "prism_core._builtin.numpy_ops:requires_grad",
        standard=False, dtypes=FLOATING,
    ),
    OpRecord(
        "detach",
        "(x, /)",
        """``x`` cut from the gradient graph (an array sharing ``x``'s data that tracks no
        gradient, torch's ``detach``), the op of the numerics hook ``Backend.detach`` (not in
        the Array API nor NumPy). A backend without autograd, NumPy among them, returns ``x``
        itself.""",
        (0,), "view", "array", "prism_core._builtin.numpy_ops:detach",
        standard=False,
    ),
)  # fmt: skip
