"""The conformance suite's inputs for the statistics family of the Array API (see ``__init__``):
sum, mean, std, min, max and cumulative_sum on arrays of every layout; prod and
cumulative_prod of numbers near one (no overflow), var, all, any and diff; NumPy's cov and
histogram."""

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

#: The ops Prism had first (their cases: :func:`_reductions_cases`).
_REDUCTIONS = ("sum", "mean", "std", "min", "max", "cumulative_sum")


def _near_one(cases: dict[str, Any], m: Maker) -> dict[str, Any]:
    """Products that neither overflow nor underflow: floating-point values moved into
    [0.99, 1.01), in place (the layouts stay); integers (1 or 2) stay, and multiply modulo
    2**64 alike on every backend."""
    if m.dt.kind in "fc":
        for x in cases.values():
            x -= 2
            x *= 0.01
            x += 1
    return cases


def _reductions_cases(op: str, m: Maker) -> dict[str, Case]:
    """The cases of the ops of :data:`_REDUCTIONS`."""
    if op == "cumulative_sum":  # axis=None is for vectors only
        return {s: ((x,), {} if x.ndim == 1 else {"axis": 1}) for s, x in vector_cases(m).items()}
    cases: dict[str, Case] = {s: ((x,), {}) for s, x in matrix_cases(m).items()}
    if op != "sum":  # the mean of nothing warns, the minimum of nothing is an error
        del cases["empty"]
    return cases


def _reductions_keywords(op: str, m: Maker) -> dict[str, list[Case]]:
    """The keyword cases of the ops of :data:`_REDUCTIONS`."""
    import prism_core

    x, a, _, cube = keyword_arrays(m)
    reduction: dict[str, list[Case]] = {
        "axis": [((a,), {"axis": 0}), ((a,), {"axis": (0, 1)}), ((a,), {"axis": -1})],
        "keepdims": [((a,), {"keepdims": True}), ((a,), {"axis": 1, "keepdims": True})],
    }
    if op == "cumulative_sum":
        ints = Maker("int32")(N2, N2)
        return {
            "axis": [((a,), {"axis": 0}), ((cube,), {"axis": -1})],
            "dtype": [
                ((ints,), {"axis": 0, "dtype": "float64"}),
                ((x,), {"dtype": prism_core.complex128}),
            ],
            "include_initial": [
                ((x,), {"include_initial": True}),
                ((a,), {"axis": 1, "include_initial": True}),
            ],
        }
    if op == "sum":
        ints = Maker("int32")(N2, N2)
        return {
            **reduction,
            "dtype": [((ints,), {"dtype": "float64"}), ((a,), {"dtype": prism_core.complex128})],
        }
    if op == "std":
        return {**reduction, "correction": [((a,), {"correction": 1}), ((a,), {"correction": 0.5})]}
    return reduction  # mean, min, max


def input_cases(op: str, m: Maker) -> dict[str, Case]:
    """NumPy arguments for ``op`` by shape, made with ``m``; ``{}`` for an op without cases."""
    if op in _REDUCTIONS:
        return _reductions_cases(op, m)
    if op in ("all", "any"):
        # Booleans drawn, not converted from m's numbers (nearly all of which are non-zero);
        # small integers are zero often, floating-point numbers seldom.
        matrices = matrix_cases(m)
        if m.dt.kind == "b":
            for x in matrices.values():
                x[...] = m.rng.uniform(size=x.shape) < 0.97  # in place: the layouts stay
        cases: dict[str, Case] = {s: ((x,), {}) for s, x in matrices.items()}
        cases["standard"] = ((matrices["standard"],), {"axis": -1})  # a result per row
        cases["odd"] = ((matrices["odd"],), {"axis": 0, "keepdims": True})
        return cases
    if op == "prod":
        matrices = _near_one(matrix_cases(m, positive=True), m)
        cases = {s: ((x,), {}) for s, x in matrices.items()}
        cases["odd"] = ((matrices["odd"],), {"axis": 1})
        cases["strided"] = ((matrices["strided"],), {"axis": (0, 1), "keepdims": True})
        return cases
    if op == "var":  # the variance of nothing is NaN with a warning: no empty case
        matrices = matrix_cases(m)
        cases = {s: ((x,), {}) for s, x in matrices.items() if s != "empty"}
        cases["odd"] = ((matrices["odd"],), {"axis": 0, "correction": 1})
        return cases
    if op == "cov":  # variables in rows; one variable (a vector) gives a 0-d result
        return {
            "standard": ((m(8, N2),), {}),
            "vector": ((m(N1),), {}),
            "odd": ((m(5, 67),), {}),
            "strided": ((m.strided(N2, N2),), {}),
            "pair": ((m(4, N2), m(2, N2)), {}),  # y, more variables, by position
        }
    if op == "histogram":  # a vector, a matrix (flattened), one value (edges around it)
        return {
            "standard": ((m(N1),), {}),
            "matrix": ((m(N2, N2),), {}),
            "one": ((m(1),), {}),
            "empty": ((m(0),), {}),
        }
    if op not in ("cumulative_prod", "diff"):
        return {}
    vectors = vector_cases(m, positive=op == "cumulative_prod")
    if op == "cumulative_prod":  # axis=None is for vectors only
        vectors = _near_one(vectors, m)
        return {
            s: ((x,), {"axis": 1, "include_initial": True} if x.ndim > 1 else {})
            for s, x in vectors.items()
        }
    cases = {s: ((x,), {}) for s, x in vectors.items()}  # diff
    standard = vectors["standard"]
    cases["standard"] = ((standard,), {"n": 2, "prepend": standard[:3], "append": standard[:1]})
    cases["fortran"] = ((vectors["fortran"],), {"axis": 0})
    return cases


def keyword_cases(op: str, m: Maker) -> dict[str, list[Case]]:
    """The calls that exercise each keyword argument ``op`` documents, made with ``m``; ``{}``
    for an op without keywords."""
    if op in _REDUCTIONS:
        return _reductions_keywords(op, m)
    if op == "cov":
        x, y = m(4, N2), m(2, N2)
        return {
            "y": [((x,), {"y": y}), ((x,), {"y": m(N2)})],
            "rowvar": [((x.T,), {"rowvar": False}), ((x.T,), {"y": y.T, "rowvar": False})],
            "bias": [((x,), {"bias": True})],
            "ddof": [((x,), {"ddof": 0}), ((x,), {"bias": True, "ddof": 2})],
        }
    if op == "histogram":
        import numpy as np

        x = m(N1)
        return {
            "bins": [((x,), {"bins": 7}), ((x,), {"bins": np.sort(m(6))})],
            "range": [((x,), {"range": (-1.0, 1.0)}), ((x,), {"bins": 3, "range": (0, 2)})],
            "weights": [((x,), {"weights": m(N1)})],
            "density": [((x,), {"density": True}), ((x,), {"bins": 5, "density": True})],
        }
    if op not in ("prod", "var", "all", "any", "cumulative_prod", "diff"):
        return {}
    a, cube = _near_one(
        {"a": m(N2, N2, positive=True), "cube": m(4, 8, N2, positive=True)}, m
    ).values()
    if m.dt.kind == "b":  # booleans drawn: nearly all of m's numbers are true
        a, cube = m.rng.uniform(size=a.shape) < 0.97, m.rng.uniform(size=cube.shape) < 0.97
    reduction: dict[str, list[Case]] = {
        "axis": [((a,), {"axis": 0}), ((cube,), {"axis": (0, 2)}), ((cube,), {"axis": -1})],
        "keepdims": [((a,), {"keepdims": True}), ((cube,), {"axis": 1, "keepdims": True})],
    }
    if op in ("all", "any"):
        return reduction
    if op == "prod":
        ints = Maker("int32")(N2, N2)
        return {
            **reduction,
            "dtype": [((ints,), {"axis": 0, "dtype": "float64"}), ((a,), {"dtype": m.dt})],
        }
    if op == "var":
        return {
            **reduction,
            "correction": [((a,), {"correction": 1}), ((cube,), {"correction": 0.5})],
        }
    x = a.reshape(-1)
    if op == "cumulative_prod":
        return {
            "axis": [((a,), {"axis": 0}), ((cube,), {"axis": -1})],
            "dtype": [((Maker("int32")(N1),), {"dtype": "float64"}), ((x,), {"dtype": m.dt})],
            "include_initial": [
                ((x,), {"include_initial": True}),
                ((a,), {"axis": 1, "include_initial": True}),
            ],
        }
    # diff
    return {
        "axis": [((a,), {"axis": 0}), ((cube,), {"axis": 1})],
        "n": [((x,), {"n": 2}), ((a,), {"n": 0}), ((x[:3],), {"n": 5})],
        "prepend": [((x,), {"prepend": x[:5]}), ((a,), {"axis": 0, "prepend": a[:1]})],
        "append": [((x,), {"append": x[-2:]}), ((a,), {"append": a[:, :3], "n": 2})],
    }
