"""The conformance suite's inputs for the searching family of the Array API (see ``__init__``):
argsort, nonzero, searchsorted, count_nonzero and the unique_* functions."""

from __future__ import annotations

from typing import Any

from prism_core.testing._inputs import N1, N2, Case, Maker, matrix_cases

__all__ = ["DTYPES", "input_cases"]

_ALL = ("float64", "float32", "complex128", "complex64", "int64", "int32")
_REAL = ("float64", "float32", "int64", "int32")
_UNIQUE = ("unique_all", "unique_counts", "unique_inverse", "unique_values")

#: Op -> the dtypes the suite checks it in.
DTYPES: dict[str, tuple[str, ...]] = {
    # The standard sorts and searches real numbers (NumPy orders complex ones its own way).
    "argsort": _REAL,
    "searchsorted": _REAL,
    "nonzero": _ALL,
    "count_nonzero": _ALL,
    # Complex ones too: equality is defined for every dtype (sorted by real, then imaginary part).
    **dict.fromkeys(_UNIQUE, (*_REAL, "complex128")),
}


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


def input_cases(op: str, m: Maker) -> dict[str, Case] | None:
    """NumPy arguments for ``op`` by shape, made with ``m``; ``None`` for another family's op."""
    if op not in DTYPES:
        return None
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


def keyword_cases(op: str, m: Maker) -> dict[str, list[Case]] | None:
    """The calls that exercise each keyword argument ``op`` documents, made with ``m``;
    ``None`` for another family's op."""
    if op not in DTYPES:
        return None
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
