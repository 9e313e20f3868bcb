"""The conformance suite's inputs for the manipulation and indexing family of the Array API
(``__init__``): each op on arrays of every layout of :data:`~prism_core.testing._standard.SHAPES`
(the ``standard`` case large enough for a GPU's size check), with the keyword arguments the
layout calls for (``take`` of a matrix needs its ``axis``); ``stack`` and ``concat`` of lists of
arrays of one shape and layout."""

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

#: The ops Prism had first (their cases: :func:`_reshaping_cases`).
_RESHAPING = ("reshape", "transpose", "moveaxis", "expand_dims", "stack", "concat")


def _matrices(m: Maker) -> dict[str, Any]:
    return {
        "standard": m(N2, N2),
        "empty": m(0, N2),
        "one": m(1, 1),
        "odd": m(65, 67),
        "strided": m.strided(N2, N2),
        "fortran": m.fortran(N2, N2),
    }


def _indices(m: Maker, low: int, high: int, *shape: int) -> Any:
    """int64 indices in ``[low, high)`` (negative ones too), the same every time."""
    return m.rng.integers(low, high, size=shape, dtype="int64")


def _reshaping_cases(op: str, m: Maker) -> dict[str, Case]:
    """The cases of the ops of :data:`_RESHAPING`."""
    if op == "reshape":
        return {
            "standard": ((m(N1), (N2, N2)), {}),
            "empty": ((m(0), (0, 3)), {}),
            "one": ((m(1), (1, 1)), {}),
            "odd": ((m(N1 + 1), (17, 241)), {}),
            "strided": ((m.strided(N1), (N2, N2)), {}),
            "fortran": ((m.fortran(N2, N2), (N1,)), {}),
        }
    if op == "transpose":
        return {s: ((x,), {}) for s, x in matrix_cases(m).items()}
    if op == "moveaxis":
        arrays = {
            "standard": m(8, 8, N2),
            "empty": m(0, 2, 3),
            "one": m(1, 1, 1),
            "odd": m(5, 7, 117),
            "strided": m.strided(8, 8, N2),
            "fortran": m.fortran(8, 8, N2),
        }
        return {s: ((x, 0, -1), {}) for s, x in arrays.items()}
    if op == "expand_dims":
        return {s: ((x, 0), {}) for s, x in vector_cases(m).items()}
    # stack, concat: one argument, a list of arrays of one shape and layout
    firsts, seconds = vector_cases(m), vector_cases(m)
    return {s: (([x, seconds[s], x],), {}) for s, x in firsts.items()}


def input_cases(op: str, m: Maker) -> dict[str, Case]:
    """NumPy arguments for ``op`` by shape, made with ``m``; ``{}`` for an op without cases."""
    if op in _RESHAPING:
        return _reshaping_cases(op, m)
    np = m.np
    matrices = _matrices(m)
    if op == "broadcast_arrays":
        return {
            "standard": ((m(N2, N2), m(N2)), {}),
            "empty": ((m(0, 3), m(3), m(1, 1)), {}),
            "one": ((m(1, 1), m(1)), {}),
            "odd": ((m(65, 1), m(67)), {}),
            "strided": ((m.strided(N2, N2), m.strided(1, N2)), {}),
            "fortran": ((m.fortran(N2, N2), m(N2, 1)), {}),
        }
    if op == "broadcast_to":
        return {
            "standard": ((m(N1), (2, N1)), {}),
            "empty": ((m(0), (3, 0)), {}),
            "one": ((m(1), (1, 1)), {}),
            "odd": ((m(67), (65, 67)), {}),
            "strided": ((m.strided(N2, N2), (2, N2, N2)), {}),
            "fortran": ((m.fortran(N2, N2), (2, N2, N2)), {}),
        }
    if op == "flip":
        cases: dict[str, Case] = {s: ((x,), {}) for s, x in matrices.items()}
        cases["odd"] = ((matrices["odd"],), {"axis": 1})
        return cases
    if op == "permute_dims":
        cases = {s: ((x, (1, 0)), {}) for s, x in matrices.items()}
        cases["standard"] = ((m(8, 8, N2), (2, 0, 1)), {})
        return cases
    if op == "squeeze":
        return {
            "standard": ((m(N2, 1, N2), 1), {}),
            "empty": ((m(0, 1), -1), {}),
            "one": ((m(1, 1), (0, 1)), {}),
            "odd": ((m(65, 1, 67), (1,)), {}),
            "strided": ((m.strided(N2, 1, N2), 1), {}),
            "fortran": ((m.fortran(N2, 1, N2), 1), {}),
        }
    if op == "unstack":
        cases = {s: ((x,), {}) for s, x in matrices.items()}
        cases["odd"] = ((matrices["odd"],), {"axis": -1})
        return cases
    if op == "roll":
        cases = {s: ((x, 3), {}) for s, x in matrices.items()}
        cases["odd"] = ((matrices["odd"], (2, -5)), {"axis": (0, 1)})
        cases["fortran"] = ((matrices["fortran"], -7), {"axis": 0})
        return cases
    if op == "repeat":
        return {
            "standard": ((m(N1), 2), {}),
            "empty": ((m(0, 3), 3), {"axis": 0}),
            "one": ((m(1), np.asarray([4])), {}),
            "odd": ((m(65, 67), _indices(m, 0, 3, 67)), {"axis": 1}),
            "strided": ((m.strided(N2, N2), 2), {"axis": -1}),
            "fortran": ((m.fortran(N2, N2), np.asarray(2)), {"axis": 0}),
        }
    if op == "tile":
        return {
            "standard": ((m(N2, N2), (2, 1)), {}),
            "empty": ((m(0), (3,)), {}),
            "one": ((m(1), (2, 2)), {}),
            "odd": ((m(65, 67), (1, 2)), {}),
            "strided": ((m.strided(N2, N2), (2,)), {}),
            "fortran": ((m.fortran(N2, N2), (1, 1, 2)), {}),
        }
    if op == "take":
        return {
            "standard": ((m(N2, N2), _indices(m, -N2, N2, 40)), {"axis": 0}),
            "empty": ((m(0, 3), _indices(m, 0, 1, 0)), {"axis": 0}),
            "one": ((m(1), np.asarray([0, -1, 0])), {}),
            "odd": ((m(65, 67), _indices(m, -67, 67, 33)), {"axis": 1}),
            "strided": ((m.strided(N1), _indices(m, 0, N1, 100)), {}),
            "fortran": ((m.fortran(N2, N2), _indices(m, 0, N2, 7)), {"axis": -1}),
        }
    if op != "take_along_axis":
        return {}
    # indices of x's rank, along the last axis unless said
    return {
        "standard": ((m(N2, N2), _indices(m, -N2, N2, N2, 10)), {}),
        "empty": ((m(0, 3), _indices(m, 0, 3, 0, 3)), {}),
        "one": ((m(1, 1), np.asarray([[0]])), {}),
        "odd": ((m(65, 67), _indices(m, -65, 65, 3, 67)), {"axis": 0}),
        "strided": ((m.strided(N2, N2), _indices(m, 0, N2, 1, 5)), {}),
        "fortran": ((m.fortran(N2, N2), _indices(m, 0, N2, N2, N2)), {"axis": -2}),
    }


def keyword_cases(op: str, m: Maker) -> dict[str, list[Case]]:
    """The calls that exercise each keyword argument ``op`` documents (``{keyword: [(args,
    kwargs), ...]}``), made with ``m``; ``{}`` for an op without keywords."""
    if op in _RESHAPING:
        x, a, b, cube = keyword_arrays(m)
        if op == "reshape":
            return {
                "shape": [((x,), {"shape": (N2, N2)}), ((x,), {"shape": (-1, 32)})],
                "copy": [((x, (N2, N2)), {"copy": True}), ((x, (N2, N2)), {"copy": False})],
            }
        if op == "transpose":
            return {"axes": [((cube,), {"axes": (1, 0, 2)}), ((cube,), {"axes": None})]}
        if op == "moveaxis":
            return {
                "source": [((cube,), {"source": 0, "destination": -1})],
                "destination": [((cube, (0, 1)), {"destination": (2, 0)})],
            }
        if op == "expand_dims":
            return {"axis": [((a,), {"axis": 1}), ((a,), {"axis": -1})]}
        xs = [a, b, a]  # stack, concat
        flat = {"axis": None} if op == "concat" else {"axis": -1}
        return {"axis": [((xs,), {"axis": 1}), ((tuple(xs),), flat)]}
    a, cube = m(N2, N2), m(8, 8, N2)
    if op == "broadcast_to":
        return {"shape": [((m(N2),), {"shape": (N2, N2)}), ((a,), {"shape": (2, 1, N2, N2)})]}
    if op == "flip":
        return {"axis": [((a,), {"axis": 0}), ((cube,), {"axis": (0, -1)}), ((a,), {"axis": None})]}
    if op == "permute_dims":
        return {"axes": [((cube,), {"axes": (1, 2, 0)}), ((cube,), {"axes": (-1, 0, 1)})]}
    if op == "squeeze":
        return {"axis": [((m(N2, 1),), {"axis": 1}), ((m(1, N2, 1),), {"axis": (0, -1)})]}
    if op == "unstack":
        return {"axis": [((cube,), {"axis": 1}), ((cube,), {"axis": -1})]}
    if op == "roll":
        return {
            "shift": [((a,), {"shift": 5}), ((a,), {"shift": (1, -2), "axis": (0, 1)})],
            "axis": [((a, 3), {"axis": 1}), ((cube, 2), {"axis": (0, 2)})],
        }
    if op == "repeat":
        counts = _indices(m, 0, 3, N2)
        # axis=None (flatten) is the default: given by keyword as the others are.
        return {
            "axis": [((a, 2), {"axis": 0}), ((a, counts), {"axis": -1}), ((a, 2), {"axis": None})]
        }
    if op == "take":
        indices = _indices(m, -N2, N2, 9)
        return {"axis": [((a, indices), {"axis": 1}), ((cube, indices[:4] % 8), {"axis": -3})]}
    if op == "take_along_axis":
        indices = _indices(m, -N2, N2, N2, 3)
        return {"axis": [((a, indices), {"axis": -1}), ((a, indices.T), {"axis": 0})]}
    return {}
