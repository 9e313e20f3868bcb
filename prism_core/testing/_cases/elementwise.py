"""The conformance suite's inputs for the elementwise family (see ``__init__``): the arithmetic
functions, ``maximum``/``minimum``/``clip`` and the standard's functions made from the table
(``kernel/records/elementwise.py``), on vectors of every layout (and a matrix in Fortran order),
with inputs inside each function's domain (``sqrt`` of positive numbers, ``acos`` of numbers in
(-1, 1), ``remainder`` by positive ones)."""

from __future__ import annotations

from prism_core.kernel.records.elementwise import ELEMENTWISE
from prism_core.testing._inputs import N1, Case, Maker, one_arg_cases, vector_cases

__all__ = ["input_cases", "keyword_cases"]

#: The table's functions, by name.
_TABLE = {e.name: e for e in ELEMENTWISE}
#: The table's functions whose inputs must lie in (-1, 1) (their real domain), or be positive.
_UNIT_DOMAIN = frozenset({"acos", "asin", "atanh"})
_POSITIVE_DOMAIN = frozenset({"acosh", "log1p", "log2", "log10", "reciprocal"})
#: The table's binary functions whose second operand must be positive.
_POSITIVE_SECOND = frozenset(
    {"floor_divide", "remainder", "bitwise_left_shift", "bitwise_right_shift"}
)


def input_cases(op: str, m: Maker) -> dict[str, Case]:
    """NumPy arguments for ``op`` by shape, made with ``m``; ``{}`` for an op without cases."""
    # Drawn first for every op: the arrays of the other cases follow these numbers.
    one_arg = one_arg_cases(m)
    if op in ("square", "exp", "abs", "real", "conj"):
        return one_arg
    if op in ("sqrt", "log"):
        return one_arg_cases(m, positive=True)
    if op in ("add", "subtract", "multiply", "divide", "power"):
        firsts = vector_cases(m, positive=op == "power")
        if op != "power":
            seconds = vector_cases(m, positive=op == "divide")
        elif m.dt.kind in "iu":  # integers to the powers 0 and 1
            seconds = vector_cases(m, positive=True)
            for y in seconds.values():
                y -= 1  # in place: the layouts stay what they are
        else:  # a real exponent in [0.5, 1.5), of the same precision
            seconds = vector_cases(Maker(str(m.real)), positive=True)
            for y in seconds.values():
                y *= 0.5
        return {s: ((firsts[s], seconds[s]), {}) for s in firsts}
    table = _TABLE.get(op)
    if table is not None and table.arity == 1:
        positive = op in _UNIT_DOMAIN or op in _POSITIVE_DOMAIN
        vectors = vector_cases(m, positive=positive)
        if op in _UNIT_DOMAIN:  # [1, 3) scaled into [0.3, 0.9)
            for x in vectors.values():
                x *= 0.3  # in place: the layouts stay what they are
        return {s: ((x,), {}) for s, x in vectors.items()}
    if table is not None:
        firsts = vector_cases(m)
        seconds = vector_cases(m, positive=op in _POSITIVE_SECOND)
        return {s: ((firsts[s], seconds[s]), {}) for s in firsts}
    if op in ("maximum", "minimum"):
        firsts, seconds = vector_cases(m), vector_cases(m)
        return {s: ((firsts[s], seconds[s]), {}) for s in firsts}
    if op == "clip":  # Python bounds of x's kind, then arrays of bounds (min <= max)
        low, high = (-1, 1) if m.dt.kind in "iu" else (-0.5, 0.5)
        bounded: dict[str, Case] = {s: ((x, low, high), {}) for s, x in vector_cases(m).items()}
        p, q = m(N1), m(N1)
        bounded["bounds"] = ((m(N1), m.np.minimum(p, q), m.np.maximum(p, q)), {})
        return bounded
    return {}


def keyword_cases(op: str, m: Maker) -> dict[str, list[Case]]:
    """The calls that exercise each keyword argument ``op`` documents, made with ``m``; ``{}``
    for an op without keywords (all but ``clip``)."""
    if op == "clip":  # bounds by keyword are Python scalars: keywords are not moved
        x = m(N1)
        low, high = (-1, 1) if m.dt.kind in "iu" else (-0.5, 0.5)
        return {
            "min": [((x,), {"min": low}), ((x,), {"min": low, "max": high})],
            "max": [((x,), {"max": high}), ((x, low), {"max": high})],
        }
    return {}
