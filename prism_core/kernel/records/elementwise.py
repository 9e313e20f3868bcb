"""The elementwise functions of the Python Array API standard (2024.12), declared as data.

One :class:`~prism_core.kernel.oprecord.OpRecord` per op (``oprecord.py`` says what each
field means and who reads it): the arithmetic ones written out, the others made from the
compact table :data:`_ROWS` (arity, what it computes, the dtypes the standard defines it for,
whether the result is bool, flops per element, NumPy's function): adding a function of that
kind is adding a row.  A pure module: it imports nothing of Prism but ``oprecord`` and
``op_examples``, and no array library (``add``'s examples import NumPy when called).
docs/array-api.md, "The elementwise functions".
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Literal

from prism_core.kernel.op_examples import Examples
from prism_core.kernel.oprecord import (
    ALL,
    FLOATING,
    INTEGERS,
    REAL,
    REAL_FLOATING,
    Kinds,
    OpRecord,
)

__all__ = ["ELEMENTWISE", "RECORDS", "STANDARD_ELEMENTWISE"]


def _numpy(r: OpRecord) -> OpRecord:
    """``r`` with NumPy's semantics (``OpRecord.promoted``, ``widened``) and the conformance
    suite's ``probes``: two operands are promoted together and must agree in shape; a floating
    function's integer arguments are computed each in a float of its own (``sin`` of int8 is
    float16), but ``divide``'s in float64, and ``imag``'s and ``reciprocal``'s not at all
    (NumPy keeps them integers)."""
    widened: Literal["float64", "float"] | None = None
    if r.name == "divide":
        widened = "float64"
    elif r.kinds in ("floating", "real_floating") and not r.boolean_result:
        widened = None if r.name in ("imag", "reciprocal") else "float"
    two = r.arity == 2
    shapes: tuple[Literal["shapes"], ...] = ("shapes",) if two else ()
    return r._replace(promoted=(0, 1) if two else (), widened=widened, probes=shapes)


_BROADCAST = """the operands broadcast against each other and their dtypes promote by the
backend's rules (NumPy's, NEP 50); either operand may be a Python scalar, which takes the other
operand's dtype."""


def _binary(
    name: str, what: str, kinds: Kinds, standard: str = "", aliases: tuple[str, ...] = ()
) -> OpRecord:
    """A function of two operands that broadcast, NumPy's ufunc of the same name; ``standard``
    is the standard's name where it is not ``name``.  Its calls split (one of the first ops)."""
    doc = f"{what}, elementwise, as the Array API's ``{standard or name}``: {_BROADCAST}"
    return _numpy(OpRecord(
        name, "(x1, x2, /)", doc, (0, 1), "elementwise", "array", f"numpy:{name}",
        aliases=aliases, standard=standard or True, dtypes=REAL if kinds == "real" else ALL,
        kinds=kinds, split="elementwise",
    ))  # fmt: skip


def _unary(
    name: str, what: str, kinds: Kinds, more: str, aliases: tuple[str, ...] = ()
) -> OpRecord:
    """A function of one operand, NumPy's ufunc of the same name; its calls split."""
    doc = f"{what}, elementwise, as the Array API's ``{name}``; {more}"
    return _numpy(OpRecord(
        name, "(x, /)", doc, (0,), "elementwise", "array", f"numpy:{name}",
        aliases=aliases, kinds=kinds, dtypes=FLOATING if kinds == "floating" else ALL,
        split="elementwise",
    ))  # fmt: skip


def _vectors(n: int, dtype: str, batch: int | None) -> tuple[object, ...]:
    """Two vectors of n standard normal numbers, seeded by n (``add``'s ``examples``)."""
    import numpy as np

    rng = np.random.default_rng(n)
    return rng.standard_normal(n).astype(dtype), rng.standard_normal(n).astype(dtype)


def _vector_bytes(n: int, dtype: str, batch: int | None) -> int:
    """The bytes of the two vectors and their sum."""
    import numpy as np

    return 3 * n * np.dtype(dtype).itemsize


#: ``add``'s example arguments, for ``prism bench`` and ``prism.tune(op, sizes=...)``.
_ADD = Examples(
    make=_vectors,
    nbytes=_vector_bytes,
    size="two vectors of n",
    quick=(1024, 1 << 20),
    full=(2**10, 2**14, 2**18, 2**22),
    axis="number of elements n",
)

#: The arithmetic functions, written out.
_ARITHMETIC: tuple[OpRecord, ...] = (
    _binary("add", "the sum ``x1 + x2``", "numeric", aliases=("vector_add",))._replace(
        examples=_ADD
    ),
    _binary("subtract", "the difference ``x1 - x2``", "numeric"),
    _binary("multiply", "the product ``x1 * x2``", "numeric"),
    _binary(
        "divide",
        "the true quotient ``x1 / x2`` (integers give floating-point results)",
        "floating",
    ),
    _binary(
        "power",
        "``x1`` raised to ``x2`` (integers to negative integer powers are an error)",
        "numeric",
        standard="pow",
        aliases=("pow",),
    ),
    _unary("square", "``x * x``", "numeric", "the result has the dtype of ``x``."),
    _unary(
        "sqrt",
        "the principal square root",
        "floating",
        "integers give floating-point results, negative reals give NaN (use a complex input "
        "for complex roots).",
    ),
    _unary("exp", "``e`` raised to ``x``", "floating", "integers give floating-point results."),
    _unary(
        "log",
        "the natural logarithm",
        "floating",
        "integers give floating-point results; zero gives -inf and negative reals NaN.",
    ),
    _unary(
        "abs",
        "the absolute value",
        "numeric",
        "complex inputs give the magnitude in the matching real dtype (NumPy's name "
        "``absolute`` is an alias).",
        aliases=("absolute",),
    ),
    _unary(
        "real",
        "the real part",
        "numeric",
        "complex64 gives float32, complex128 float64, real inputs are returned as they are.",
    ),
    _unary(
        "conj",
        "the complex conjugate",
        "numeric",
        "real inputs are returned unchanged in value and dtype.",
    ),
    _binary("maximum", "the larger of ``x1`` and ``x2`` (NaN where either is NaN)", "real"),
    _binary("minimum", "the smaller of ``x1`` and ``x2`` (NaN where either is NaN)", "real"),
    OpRecord(
        "clip",
        "(x, /, min=None, max=None)",
        """``x`` with each element limited to ``[min, max]``, as the Array API's ``clip``:
        ``min`` and ``max`` are Python scalars or arrays broadcasting against ``x``, and
        ``None`` leaves that side open (both ``None`` gives a copy of ``x``); where ``min >
        max`` the result is ``max``, and NaN propagates.  The result has ``x``'s dtype for
        bounds of ``x``'s kind (a float bound promotes an integer ``x``, as NumPy does).  Array
        bounds are array arguments when given by position (moved between backends with ``x``);
        by keyword they are passed as they are.""",
        (0, 1, 2), "elementwise", "array", "prism_core._builtin.numpy_ops:clip",
        kinds="real", dtypes=REAL,
        split="elementwise",
    ),
)  # fmt: skip

_ROWS: tuple[tuple[str, int, str, Kinds, bool, float, str], ...] = (
    # -- trigonometric and hyperbolic ---------------------------------------------------------
    ("acos", 1, "the principal inverse cosine", "floating", False, 20.0, "arccos"),
    ("acosh", 1, "the inverse hyperbolic cosine", "floating", False, 20.0, "arccosh"),
    ("asin", 1, "the principal inverse sine", "floating", False, 20.0, "arcsin"),
    ("asinh", 1, "the inverse hyperbolic sine", "floating", False, 20.0, "arcsinh"),
    ("atan", 1, "the principal inverse tangent", "floating", False, 20.0, "arctan"),
    (
        "atan2",
        2,
        "the inverse tangent of ``x1 / x2`` in the quadrant of the point ``(x2, x1)``",
        "real_floating",
        False,
        20.0,
        "arctan2",
    ),
    ("atanh", 1, "the inverse hyperbolic tangent", "floating", False, 20.0, "arctanh"),
    ("cos", 1, "the cosine (of radians)", "floating", False, 20.0, "cos"),
    ("cosh", 1, "the hyperbolic cosine", "floating", False, 20.0, "cosh"),
    ("sin", 1, "the sine (of radians)", "floating", False, 20.0, "sin"),
    ("sinh", 1, "the hyperbolic sine", "floating", False, 20.0, "sinh"),
    ("tan", 1, "the tangent (of radians)", "floating", False, 20.0, "tan"),
    ("tanh", 1, "the hyperbolic tangent", "floating", False, 20.0, "tanh"),
    # -- exponentials and logarithms ----------------------------------------------------------
    ("expm1", 1, "``exp(x) - 1``, accurate near zero", "floating", False, 20.0, "expm1"),
    ("log1p", 1, "``log(1 + x)``, accurate near zero", "floating", False, 20.0, "log1p"),
    ("log2", 1, "the base-2 logarithm", "floating", False, 20.0, "log2"),
    ("log10", 1, "the base-10 logarithm", "floating", False, 20.0, "log10"),
    (
        "logaddexp",
        2,
        "``log(exp(x1) + exp(x2))`` without overflow",
        "real_floating",
        False,
        40.0,
        "logaddexp",
    ),
    (
        "hypot",
        2,
        "the hypotenuse ``sqrt(x1**2 + x2**2)`` without overflow",
        "real_floating",
        False,
        5.0,
        "hypot",
    ),
    # -- rounding and signs ---------------------------------------------------------------------
    ("ceil", 1, "the smallest integer not below ``x``", "real", False, 1.0, "ceil"),
    ("floor", 1, "the largest integer not above ``x``", "real", False, 1.0, "floor"),
    ("trunc", 1, "``x`` rounded towards zero", "real", False, 1.0, "trunc"),
    (
        "round",
        1,
        "``x`` rounded to the nearest integer, halves to even",
        "numeric",
        False,
        1.0,
        "round",
    ),
    (
        "sign",
        1,
        "the sign (-1, 0 or 1; ``x / |x|`` for complex ``x``)",
        "numeric",
        False,
        1.0,
        "sign",
    ),
    ("signbit", 1, "whether the sign bit is set", "real_floating", True, 1.0, "signbit"),
    (
        "copysign",
        2,
        "``x1``'s magnitude with ``x2``'s sign",
        "real_floating",
        False,
        1.0,
        "copysign",
    ),
    (
        "nextafter",
        2,
        "the next representable value after ``x1`` towards ``x2``",
        "real_floating",
        False,
        1.0,
        "nextafter",
    ),
    ("negative", 1, "the negation ``-x``", "numeric", False, 1.0, "negative"),
    ("positive", 1, "``+x`` (a copy of ``x``)", "numeric", False, 0.0, "positive"),
    ("reciprocal", 1, "``1 / x``", "floating", False, 1.0, "reciprocal"),
    ("imag", 1, "the imaginary part", "floating", False, 0.0, "imag"),
    # -- integer division ---------------------------------------------------------------------
    ("floor_divide", 2, "the floor of ``x1 / x2``", "real", False, 2.0, "floor_divide"),
    (
        "remainder",
        2,
        "the remainder of ``x1 / x2`` with the sign of ``x2``",
        "real",
        False,
        2.0,
        "remainder",
    ),
    # -- classification -----------------------------------------------------------------------
    ("isfinite", 1, "whether ``x`` is finite", "numeric", True, 1.0, "isfinite"),
    ("isinf", 1, "whether ``x`` is infinite", "numeric", True, 1.0, "isinf"),
    ("isnan", 1, "whether ``x`` is NaN", "numeric", True, 1.0, "isnan"),
    # -- comparisons --------------------------------------------------------------------------
    ("equal", 2, "whether ``x1 == x2``", "all", True, 1.0, "equal"),
    ("not_equal", 2, "whether ``x1 != x2``", "all", True, 1.0, "not_equal"),
    ("greater", 2, "whether ``x1 > x2``", "real", True, 1.0, "greater"),
    ("greater_equal", 2, "whether ``x1 >= x2``", "real", True, 1.0, "greater_equal"),
    ("less", 2, "whether ``x1 < x2``", "real", True, 1.0, "less"),
    ("less_equal", 2, "whether ``x1 <= x2``", "real", True, 1.0, "less_equal"),
    # -- logical ------------------------------------------------------------------------------
    ("logical_and", 2, "the logical AND", "boolean", True, 1.0, "logical_and"),
    ("logical_or", 2, "the logical OR", "boolean", True, 1.0, "logical_or"),
    ("logical_xor", 2, "the logical exclusive OR", "boolean", True, 1.0, "logical_xor"),
    ("logical_not", 1, "the logical NOT", "boolean", True, 1.0, "logical_not"),
    # -- bitwise ------------------------------------------------------------------------------
    ("bitwise_and", 2, "the bitwise AND", "integer_or_boolean", False, 1.0, "bitwise_and"),
    ("bitwise_or", 2, "the bitwise OR", "integer_or_boolean", False, 1.0, "bitwise_or"),
    ("bitwise_xor", 2, "the bitwise exclusive OR", "integer_or_boolean", False, 1.0, "bitwise_xor"),
    (
        "bitwise_invert",
        1,
        "the bitwise NOT (logical NOT for bool)",
        "integer_or_boolean",
        False,
        1.0,
        "invert",
    ),
    (
        "bitwise_left_shift",
        2,
        "``x1`` shifted left by ``x2`` bits (``x2`` non-negative)",
        "integer",
        False,
        1.0,
        "left_shift",
    ),
    (
        "bitwise_right_shift",
        2,
        "``x1`` shifted right by ``x2`` bits, arithmetically (``x2`` non-negative)",
        "integer",
        False,
        1.0,
        "right_shift",
    ),
)

#: How the documentation of a table row says what dtypes the standard defines it for.
_KIND_WORDS = MappingProxyType(
    {
        "numeric": "numeric dtypes (integer, real and complex floating point)",
        "real": "real dtypes (integer and real floating point)",
        "floating": "floating-point dtypes (real and complex); integers give floating-point "
        "results on NumPy",
        "real_floating": "real floating-point dtypes; integers give floating-point results on "
        "NumPy",
        "integer": "integer dtypes",
        "integer_or_boolean": "integer and bool dtypes",
        "boolean": "bool (other dtypes are read as true where non-zero, as NumPy does)",
        "all": "every dtype, bool included",
    }
)
#: The dtypes the conformance suite checks a table row in, by the dtypes the standard defines
#: it for (bool and integer functions in integers: NumPy reads them as bool).
_SUITE_DTYPES = MappingProxyType(
    {"numeric": ALL, "real": REAL, "floating": FLOATING, "real_floating": REAL_FLOATING}
)


def _from_row(
    name: str, arity: int, what: str, kinds: Kinds, boolean: bool, flops: float, numpy: str
) -> OpRecord:
    signature = "(x, /)" if arity == 1 else "(x1, x2, /)"
    operands = (
        ""
        if arity == 1
        else " The operands broadcast against each other and promote as in ``add``; either may "
        "be a Python scalar, which takes the other operand's dtype."
    )
    alias = numpy != name  # NumPy's name, same meaning: an alias (``arctan2``, ``invert``)
    doc = (
        f"{what}, elementwise, as the Array API's ``{name}`` (NumPy's ``{numpy}``"
        + (", an alias" if alias else "")
        + f"); the standard defines it for {_KIND_WORDS[kinds]}.{operands}"
        + (" The result is bool." if boolean else "")
    )
    return _numpy(OpRecord(
        name, signature, doc, tuple(range(arity)), "elementwise", "array", f"numpy:{numpy}",
        aliases=(numpy,) if alias else (), dtypes=_SUITE_DTYPES.get(kinds, INTEGERS),
        flops=flops, kinds=kinds, boolean_result=boolean,
    ))  # fmt: skip


#: The elementwise functions made from the table, in its order.
ELEMENTWISE: tuple[OpRecord, ...] = tuple(_from_row(*row) for row in _ROWS)

#: Every elementwise op, the arithmetic ones first.
RECORDS: tuple[OpRecord, ...] = _ARITHMETIC + ELEMENTWISE

#: Every elementwise function of the standard (2024.12) -> Prism's op for it (``pow`` is
#: ``power``).
STANDARD_ELEMENTWISE: Mapping[str, str] = MappingProxyType(
    dict(sorted((r.standard_name, r.name) for r in RECORDS if r.standard_name is not None))
)
