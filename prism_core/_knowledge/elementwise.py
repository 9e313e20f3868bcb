"""The elementwise functions of the Python Array API standard (2024.12), declared as data.

One row per function the op catalogue declares from this table: its arity, what it computes,
the dtypes the standard defines it for, its work per output element and the NumPy and torch
functions that compute it.  The catalogue, the NumPy reference, the work declarations and the
torch and CUDA plugins read it: adding a function of this kind is adding a row.
:data:`STANDARD_ELEMENTWISE` lists the whole family, the older hand-declared ops included.  A
pure module: it imports nothing of Prism and no array library.  docs/array-api.md, "The
elementwise functions".
"""

from __future__ import annotations

from typing import Literal, NamedTuple

__all__ = ["ELEMENTWISE", "STANDARD_ELEMENTWISE", "Elementwise", "Kinds"]

#: The dtypes the standard defines a function for: ``numeric`` (integers, real and complex
#: floating point), ``real`` (integers and real floating point), ``floating`` (real and complex
#: floating point), ``real_floating``, ``integer``, ``integer_or_boolean``, ``boolean``, and
#: ``all`` (every dtype, bool included).
Kinds = Literal[
    "numeric",
    "real",
    "floating",
    "real_floating",
    "integer",
    "integer_or_boolean",
    "boolean",
    "all",
]


class Elementwise(NamedTuple):
    """One elementwise function of the standard, as Prism declares it."""

    #: The op's name, the standard's.
    name: str
    #: 1 (``f(x, /)``) or 2 (``f(x1, x2, /)``, broadcasting).
    arity: int
    #: What it computes, a phrase of its documentation.
    what: str
    #: The dtypes the standard defines it for.
    kinds: Kinds
    #: ``True`` where the result is bool whatever the inputs (comparisons, ``isnan``, ...).
    boolean_result: bool
    #: Real floating-point operations per output element (a transcendental function counts
    #: as the handful a vectorised libm spends; the model's calibration absorbs the rest).
    flops: float
    #: NumPy's function (``numpy.<name>``), NumPy 1.23's spelling (``arccos`` for ``acos``).
    numpy: str
    #: torch's function (``torch.<name>``).
    torch: str


_ROWS: tuple[tuple[str, int, str, Kinds, bool, float, str, str], ...] = (
    # -- trigonometric and hyperbolic ---------------------------------------------------------
    ("acos", 1, "the principal inverse cosine", "floating", False, 20.0, "arccos", "acos"),
    ("acosh", 1, "the inverse hyperbolic cosine", "floating", False, 20.0, "arccosh", "acosh"),
    ("asin", 1, "the principal inverse sine", "floating", False, 20.0, "arcsin", "asin"),
    ("asinh", 1, "the inverse hyperbolic sine", "floating", False, 20.0, "arcsinh", "asinh"),
    ("atan", 1, "the principal inverse tangent", "floating", False, 20.0, "arctan", "atan"),
    (
        "atan2",
        2,
        "the inverse tangent of ``x1 / x2`` in the quadrant of the point ``(x2, x1)``",
        "real_floating",
        False,
        20.0,
        "arctan2",
        "atan2",
    ),
    ("atanh", 1, "the inverse hyperbolic tangent", "floating", False, 20.0, "arctanh", "atanh"),
    ("cos", 1, "the cosine (of radians)", "floating", False, 20.0, "cos", "cos"),
    ("cosh", 1, "the hyperbolic cosine", "floating", False, 20.0, "cosh", "cosh"),
    ("sin", 1, "the sine (of radians)", "floating", False, 20.0, "sin", "sin"),
    ("sinh", 1, "the hyperbolic sine", "floating", False, 20.0, "sinh", "sinh"),
    ("tan", 1, "the tangent (of radians)", "floating", False, 20.0, "tan", "tan"),
    ("tanh", 1, "the hyperbolic tangent", "floating", False, 20.0, "tanh", "tanh"),
    # -- exponentials and logarithms ----------------------------------------------------------
    ("expm1", 1, "``exp(x) - 1``, accurate near zero", "floating", False, 20.0, "expm1", "expm1"),
    ("log1p", 1, "``log(1 + x)``, accurate near zero", "floating", False, 20.0, "log1p", "log1p"),
    ("log2", 1, "the base-2 logarithm", "floating", False, 20.0, "log2", "log2"),
    ("log10", 1, "the base-10 logarithm", "floating", False, 20.0, "log10", "log10"),
    (
        "logaddexp",
        2,
        "``log(exp(x1) + exp(x2))`` without overflow",
        "real_floating",
        False,
        40.0,
        "logaddexp",
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
        "hypot",
    ),
    # -- rounding and signs ---------------------------------------------------------------------
    ("ceil", 1, "the smallest integer not below ``x``", "real", False, 1.0, "ceil", "ceil"),
    ("floor", 1, "the largest integer not above ``x``", "real", False, 1.0, "floor", "floor"),
    ("trunc", 1, "``x`` rounded towards zero", "real", False, 1.0, "trunc", "trunc"),
    (
        "round",
        1,
        "``x`` rounded to the nearest integer, halves to even",
        "numeric",
        False,
        1.0,
        "round",
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
        "sgn",
    ),
    ("signbit", 1, "whether the sign bit is set", "real_floating", True, 1.0, "signbit", "signbit"),
    (
        "copysign",
        2,
        "``x1``'s magnitude with ``x2``'s sign",
        "real_floating",
        False,
        1.0,
        "copysign",
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
        "nextafter",
    ),
    ("negative", 1, "the negation ``-x``", "numeric", False, 1.0, "negative", "negative"),
    ("positive", 1, "``+x`` (a copy of ``x``)", "numeric", False, 0.0, "positive", "positive"),
    ("reciprocal", 1, "``1 / x``", "floating", False, 1.0, "reciprocal", "reciprocal"),
    ("imag", 1, "the imaginary part", "floating", False, 0.0, "imag", "imag"),
    # -- integer division ---------------------------------------------------------------------
    (
        "floor_divide",
        2,
        "the floor of ``x1 / x2``",
        "real",
        False,
        2.0,
        "floor_divide",
        "floor_divide",
    ),
    (
        "remainder",
        2,
        "the remainder of ``x1 / x2`` with the sign of ``x2``",
        "real",
        False,
        2.0,
        "remainder",
        "remainder",
    ),
    # -- classification -----------------------------------------------------------------------
    ("isfinite", 1, "whether ``x`` is finite", "numeric", True, 1.0, "isfinite", "isfinite"),
    ("isinf", 1, "whether ``x`` is infinite", "numeric", True, 1.0, "isinf", "isinf"),
    ("isnan", 1, "whether ``x`` is NaN", "numeric", True, 1.0, "isnan", "isnan"),
    # -- comparisons --------------------------------------------------------------------------
    ("equal", 2, "whether ``x1 == x2``", "all", True, 1.0, "equal", "eq"),
    ("not_equal", 2, "whether ``x1 != x2``", "all", True, 1.0, "not_equal", "ne"),
    ("greater", 2, "whether ``x1 > x2``", "real", True, 1.0, "greater", "gt"),
    ("greater_equal", 2, "whether ``x1 >= x2``", "real", True, 1.0, "greater_equal", "ge"),
    ("less", 2, "whether ``x1 < x2``", "real", True, 1.0, "less", "lt"),
    ("less_equal", 2, "whether ``x1 <= x2``", "real", True, 1.0, "less_equal", "le"),
    # -- logical ------------------------------------------------------------------------------
    (
        "logical_and",
        2,
        "the logical AND",
        "boolean",
        True,
        1.0,
        "logical_and",
        "logical_and",
    ),
    ("logical_or", 2, "the logical OR", "boolean", True, 1.0, "logical_or", "logical_or"),
    (
        "logical_xor",
        2,
        "the logical exclusive OR",
        "boolean",
        True,
        1.0,
        "logical_xor",
        "logical_xor",
    ),
    ("logical_not", 1, "the logical NOT", "boolean", True, 1.0, "logical_not", "logical_not"),
    # -- bitwise ------------------------------------------------------------------------------
    (
        "bitwise_and",
        2,
        "the bitwise AND",
        "integer_or_boolean",
        False,
        1.0,
        "bitwise_and",
        "bitwise_and",
    ),
    (
        "bitwise_or",
        2,
        "the bitwise OR",
        "integer_or_boolean",
        False,
        1.0,
        "bitwise_or",
        "bitwise_or",
    ),
    (
        "bitwise_xor",
        2,
        "the bitwise exclusive OR",
        "integer_or_boolean",
        False,
        1.0,
        "bitwise_xor",
        "bitwise_xor",
    ),
    (
        "bitwise_invert",
        1,
        "the bitwise NOT (logical NOT for bool)",
        "integer_or_boolean",
        False,
        1.0,
        "invert",
        "bitwise_not",
    ),
    (
        "bitwise_left_shift",
        2,
        "``x1`` shifted left by ``x2`` bits (``x2`` non-negative)",
        "integer",
        False,
        1.0,
        "left_shift",
        "bitwise_left_shift",
    ),
    (
        "bitwise_right_shift",
        2,
        "``x1`` shifted right by ``x2`` bits, arithmetically (``x2`` non-negative)",
        "integer",
        False,
        1.0,
        "right_shift",
        "bitwise_right_shift",
    ),
)

#: The elementwise functions declared from this table, in declaration order.
ELEMENTWISE: tuple[Elementwise, ...] = tuple(Elementwise(*row) for row in _ROWS)

#: Every elementwise function of the standard (2024.12) -> Prism's op for it: those of
#: :data:`ELEMENTWISE` and the ones the catalogue declared before (``pow`` is ``power``).
STANDARD_ELEMENTWISE: dict[str, str] = dict(
    sorted(
        {
            **{e.name: e.name for e in ELEMENTWISE},
            **{
                name: name
                for name in (
                    "abs", "add", "clip", "conj", "divide", "exp", "log", "maximum",
                    "minimum", "multiply", "real", "sqrt", "square", "subtract",
                )
            },
            "pow": "power",
        }.items()
    )
)  # fmt: skip
