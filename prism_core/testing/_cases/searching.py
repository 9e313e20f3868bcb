"""The conformance suite's inputs for the searching family of the Array API (see ``__init__``):
argmax, argmin, sort and where on arrays of every layout; argsort, nonzero, searchsorted,
count_nonzero and the unique_* functions on matrices with many equal elements."""

from __future__ import annotations

from typing import Any

from prism_core.testing._inputs import (
    N1,
    N2,
    Case,
    Maker,
    keyword_arrays,
    matrix_cases,
    vector_cases,
)

__all__ = ["input_cases", "keyword_cases"]

#: The ops Prism had first (their cases: :func:`_extremes_cases`).
_EXTREMES = ("argmax", "argmin", "sort", "where")
#: The ops on matrices with many equal elements.
_REPEATING = (
    "argsort", "nonzero", "searchsorted", "count_nonzero",
    "unique_all", "unique_counts", "unique_inverse", "unique_values",
)  # fmt: skip


def _repeating(m: Maker) -> dict[str, Any]:
    """Matrices with many equal elements (ties for the sorts, repeats for unique_*, zeros for
    nonzero): floating-point values rounded to halves, in place (the layouts stay); integers
    are small already."""
    cases = matrix_cases(m)
    if m.dt.kind in "fc":
        for x in cases.values():
            x *= 2
            m.np.round(x, out=x)
            x /= 2
    return cases


def _extremes_cases(op: str, m: Maker) -> dict[str, Case]:
    """The cases of the ops of :data:`_EXTREMES`."""
    if op == "where":
        firsts, seconds = vector_cases(m), vector_cases(m)
        return {s: ((m.np.real(x) > 0, x, seconds[s]), {}) for s, x in firsts.items()}
    cases: dict[str, Case] = {s: ((x,), {}) for s, x in matrix_cases(m).items()}
    if op != "sort":  # the minimum of nothing is an error
        del cases["empty"]
    return cases


def input_cases(op: str, m: Maker) -> dict[str, Case]:
    """NumPy arguments for ``op`` by shape, made with ``m``; ``{}`` for an op without cases."""
    if op in _EXTREMES:
        return _extremes_cases(op, m)
    if op not in _REPEATING:
        return {}
    np = m.np
    if op == "searchsorted":  # a sorted vector, and values to place of every shape
        sorted_x1 = np.sort(_repeating(m)["standard"].reshape(-1))
        places = _repeating(m)
        cases: dict[str, Case] = {s: ((sorted_x1, v), {}) for s, v in places.items()}
        strided = np.sort(m(2 * N1))[::2]  # a sorted vector that is not contiguous
        cases["strided"] = ((strided, places["strided"]), {"side": "right"})
        cases["one"] = ((sorted_x1[:1], places["one"]), {})
        cases["empty"] = ((sorted_x1, m(0)), {})
        cases["odd"] = ((sorted_x1[: N1 - 1], m(N2 + 1)), {"side": "right"})
        return cases
    matrices = _repeating(m)
    if op == "argsort":
        out: dict[str, Case] = {s: ((x,), {}) for s, x in matrices.items()}
        out["fortran"] = ((matrices["fortran"],), {"axis": 0, "descending": True})
        out["odd"] = ((matrices["odd"],), {"descending": True})
        return out
    return {s: ((x,), {}) for s, x in matrices.items()}


def keyword_cases(op: str, m: Maker) -> dict[str, list[Case]]:
    """The calls that exercise each keyword argument ``op`` documents, made with ``m``; ``{}``
    for an op without keywords."""
    if op in _EXTREMES:
        _, a, _, cube = keyword_arrays(m)
        if op in ("argmax", "argmin"):  # one axis, or None
            return {
                "axis": [((a,), {"axis": 0}), ((a,), {"axis": -1}), ((a,), {"axis": None})],
                "keepdims": [((a,), {"keepdims": True}), ((a,), {"axis": 1, "keepdims": True})],
            }
        if op == "sort":
            ties = Maker("int64")(N2, N2).astype(m.dt)  # small integers: many equal elements
            return {
                "axis": [((a,), {"axis": 0}), ((cube,), {"axis": 1})],
                "descending": [((a,), {"descending": True}), ((ties,), {"descending": True})],
                "stable": [((ties,), {"stable": True}), ((a,), {"stable": False})],
            }
        return {}  # where takes no keyword
    if op not in _REPEATING:
        return {}
    np = m.np
    a, cube = _repeating(m)["standard"], m(4, 8, N2)
    if op == "argsort":
        return {
            "axis": [((a,), {"axis": 0}), ((cube,), {"axis": 1}), ((cube,), {"axis": -3})],
            "descending": [((a,), {"descending": True}), ((cube,), {"descending": False})],
            "stable": [((a,), {"stable": True}), ((a,), {"stable": True, "descending": True})],
        }
    if op == "searchsorted":
        x1, x2 = np.sort(a.reshape(-1)), _repeating(m)["odd"]
        sorter = np.argsort(a.reshape(-1), kind="stable")  # for the unsorted x1
        return {
            "side": [((x1, x2), {"side": "right"}), ((x1, x2), {"side": "left"})],
            "sorter": [((a.reshape(-1), x2), {"sorter": sorter})],
        }
    if op == "count_nonzero":
        return {
            "axis": [((a,), {"axis": 0}), ((cube,), {"axis": (0, 2)}), ((cube,), {"axis": -1})],
            "keepdims": [((a,), {"keepdims": True}), ((cube,), {"axis": 1, "keepdims": True})],
        }
    return {}  # nonzero and the unique_* functions take no keyword
