"""The Array API's elementwise functions that CuPy has under NumPy's names (issue 12).

One table, op name -> CuPy's function (NumPy's spelling: ``arccos`` for ``acos``): ``ops``
passes each through (:data:`prism_plugin_cuda.ops.PASSTHROUGH`) and ``variants`` declares a
variant of each (:data:`prism_plugin_cuda.variants.FUNCTIONS`).  Data only, so that plugin
discovery imports neither ``ops`` nor CuPy.
"""

from __future__ import annotations

__all__ = ["ELEMENTWISE"]

ELEMENTWISE: dict[str, str] = {
    "acos": "arccos",
    "acosh": "arccosh",
    "asin": "arcsin",
    "asinh": "arcsinh",
    "atan": "arctan",
    "atan2": "arctan2",
    "atanh": "arctanh",
    "cos": "cos",
    "cosh": "cosh",
    "sin": "sin",
    "sinh": "sinh",
    "tan": "tan",
    "tanh": "tanh",
    "expm1": "expm1",
    "log1p": "log1p",
    "log2": "log2",
    "log10": "log10",
    "logaddexp": "logaddexp",
    "hypot": "hypot",
    "ceil": "ceil",
    "floor": "floor",
    "trunc": "trunc",
    "round": "round",
    "sign": "sign",
    "signbit": "signbit",
    "copysign": "copysign",
    "nextafter": "nextafter",
    "negative": "negative",
    "positive": "positive",
    "reciprocal": "reciprocal",
    "imag": "imag",
    "floor_divide": "floor_divide",
    "remainder": "remainder",
    "isfinite": "isfinite",
    "isinf": "isinf",
    "isnan": "isnan",
    "equal": "equal",
    "not_equal": "not_equal",
    "greater": "greater",
    "greater_equal": "greater_equal",
    "less": "less",
    "less_equal": "less_equal",
    "logical_and": "logical_and",
    "logical_or": "logical_or",
    "logical_xor": "logical_xor",
    "logical_not": "logical_not",
    "bitwise_and": "bitwise_and",
    "bitwise_or": "bitwise_or",
    "bitwise_xor": "bitwise_xor",
    "bitwise_invert": "invert",
    "bitwise_left_shift": "left_shift",
    "bitwise_right_shift": "right_shift",
}
