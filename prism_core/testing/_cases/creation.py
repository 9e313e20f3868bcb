"""The conformance suite's inputs for the creation family of the Array API (see ``__init__``):
``asarray``, ``to_numpy`` and ``from_dlpack`` of vectors of every layout; the creation
functions (``zeros``, ``full``, ``arange``, ``linspace``, ``eye``, ``empty``, ``triu_indices``:
no array in, so their cases are ``standard``, ``empty``, ``one`` and some ``odd``, in the dtype
asked for), the ``*_like`` functions, ``tril``/``triu`` and ``astype`` on matrices of every
layout, and ``meshgrid`` on pairs of vectors."""

from __future__ import annotations

from typing import Any

from prism_core.testing._inputs import N1, N2, Case, Maker, matrix_cases, one_arg_cases

__all__ = ["input_cases", "keyword_cases"]

#: The ops that take an array and make one like it.
_LIKE = ("empty_like", "zeros_like", "ones_like", "full_like")


def _fill(m: Maker) -> Any:
    return {"c": 2.5 + 0.5j, "f": 2.5}.get(m.dt.kind, 3)


def _other_dtype(m: Maker) -> str:
    """A dtype to convert ``m``'s arrays to: another precision of the same kind (float64 for
    integers)."""
    return {
        "float64": "float32",
        "float32": "float64",
        "complex128": "complex64",
        "complex64": "complex128",
    }.get(m.dt.name, "float64")


def _arange_args(m: Maker) -> tuple[Any, ...]:
    """``N1`` values: fractional steps for floating dtypes, integers for integer ones."""
    if m.dt.kind == "f":
        return (-8.0, 8.0, 2.0**-8)
    return (-(N1 // 2), N1 // 2)


def input_cases(op: str, m: Maker) -> dict[str, Case]:
    """NumPy arguments for ``op`` by shape, made with ``m``; ``{}`` for an op without cases."""
    if op in ("asarray", "to_numpy", "from_dlpack"):
        return one_arg_cases(m)
    if op in ("zeros", "ones", "full"):
        extra = (_fill(m),) if op == "full" else ()
        shapes = {"standard": (N2, N2), "empty": (0,), "one": (1,), "odd": (65, 67)}
        cases = {s: ((shape, *extra), {"dtype": m.dt}) for s, shape in shapes.items()}
        cases["numpy"] = (((N2, 3), *extra, m.dt), {})  # NumPy's spelling: dtype by position
        return cases
    if op == "triu_indices":  # (n,), (n, k) or (n, k, m): no arrays in
        return {
            "standard": ((N2,), {}),
            "empty": ((0,), {}),
            "one": ((1,), {}),
            "odd": ((65, 1, 67), {}),
        }
    dt = {"dtype": m.dt}
    if op == "arange":
        return {"standard": (_arange_args(m), dt), "empty": ((0,), dt), "one": ((1,), dt)}
    if op == "linspace":
        low, high = (-3 + 1j, 5 - 2j) if m.dt.kind == "c" else (-3.0, 5.0)
        return {
            "standard": ((low, high, N1), dt),
            "empty": ((0.0, 1.0, 0), dt),
            "one": ((high, low, 1), dt),
        }
    if op in ("eye", "empty"):
        first = (N2,) if op == "eye" else ((N2, N2),)
        return {"standard": (first, dt), "empty": ((0,), dt), "one": ((1,), dt)}
    if op == "meshgrid":  # the largest vector has N1 elements (the GPU's size threshold)
        return {
            "standard": ((m(N1), m(3)), {}),
            "empty": ((m(0), m(3)), {}),
            "one": ((m(1), m(1)), {}),
            "odd": ((m(65), m(67), m(3)), {}),
            "strided": ((m.strided(N1), m.strided(5)), {}),
        }
    matrices = matrix_cases(m)
    if op == "full_like":
        return {s: ((x, _fill(m)), {}) for s, x in matrices.items()}
    if op == "astype":
        return {s: ((x, _other_dtype(m)), {}) for s, x in matrices.items()}
    if op in (*_LIKE, "tril", "triu"):
        cases = {s: ((x,), {}) for s, x in matrices.items()}
        if op in ("tril", "triu"):  # NumPy's spelling: k by position
            cases["numpy"] = ((matrices["odd"], 1), {})
        return cases
    return {}


def keyword_cases(op: str, m: Maker) -> dict[str, list[Case]]:
    """The calls that exercise each keyword argument ``op`` documents, made with ``m``; ``{}``
    for an op without keywords (``to_numpy``).  ``device`` is given as ``None`` (every
    backend's default): the devices a backend takes differ (``tests/test_array_api_creation.py``
    checks ``"cpu"`` and Prism's CPU)."""
    import prism_core

    if op == "asarray":
        x = m(N1)
        return {
            "dtype": [((x,), {"dtype": "complex128"}), ((x,), {"dtype": prism_core.complex128})],
            "copy": [((x,), {"copy": True}), ((x,), {"copy": None})],
            # Each backend takes devices of its own: the one every backend takes is its default.
            "device": [((x,), {"device": None})],
        }
    if op == "from_dlpack":
        x = m(N1)
        return {
            "copy": [((x,), {"copy": True}), ((x,), {"copy": None})],
            "device": [((x,), {"device": None})],
        }
    if op in ("zeros", "ones"):
        return {
            "shape": [((), {"shape": (N2, N2)})],
            "dtype": [(((N2, N2),), {"dtype": "int32"}), (((N2, N2),), {"dtype": m.dt})],
            "device": [(((N2, N2),), {"device": None})],
        }
    if op == "full":
        return {
            "shape": [((), {"shape": (N2, N2), "fill_value": 2.5})],
            "fill_value": [(((N2, N2),), {"fill_value": 7})],
            "dtype": [(((N2, N2), 3), {"dtype": "float32"}), (((N2, N2), 3), {"dtype": m.dt})],
            "device": [(((N2, N2), 3), {"device": None})],
        }
    if op == "triu_indices":
        return {
            "k": [((N2,), {"k": 1}), ((N2,), {"k": -3})],
            "m": [((N2,), {"m": 67}), ((N2,), {"k": 2, "m": 10})],
        }
    a, cube = m(N2, N2), m(4, N2, N2)
    default = {"device": None}
    if op == "arange":
        return {
            "stop": [((2,), {"stop": N1 + 2})],
            "step": [((N1,), {"stop": 0, "step": -1}), ((0.5,), {"stop": 99.5, "step": 0.25})],
            "dtype": [((N1,), {"dtype": m.dt}), ((0, 3.0, 0.75), {"dtype": "int64"})],
            "device": [((N1,), default)],
        }
    if op == "linspace":
        return {
            "num": [((0.0, 1.0), {"num": N1})],
            "dtype": [((0, 7), {"num": 64, "dtype": m.dt}), ((0, 7.0, 64), {"dtype": "int32"})],
            "endpoint": [((0.0, 1.0, N1), {"endpoint": False}), ((-2, 2, 9), {"endpoint": True})],
            "device": [((0.0, 1.0, 5), default)],
        }
    if op == "eye":
        return {
            "k": [((N2,), {"k": 3}), ((N2, 70), {"k": -5}), ((4,), {"k": 9})],
            "dtype": [((N2,), {"dtype": m.dt}), ((3, 5), {"dtype": "int32"})],
            "device": [((N2,), default)],
        }
    if op == "empty":
        return {
            "shape": [((), {"shape": (N2, N2)})],
            "dtype": [(((N2, N2),), {"dtype": m.dt}), (((3,),), {"dtype": "int32"})],
            "device": [(((N2,),), default)],
        }
    if op in _LIKE:
        extra = (_fill(m),) if op == "full_like" else ()
        cases: dict[str, list[Case]] = {
            "dtype": [((a, *extra), {"dtype": _other_dtype(m)}), ((a, *extra), {"dtype": m.dt})],
            "device": [((a, *extra), default)],
        }
        if op == "full_like":
            cases["fill_value"] = [((a,), {"fill_value": 7}), ((a,), {"fill_value": True})]
        return cases
    if op == "meshgrid":
        x, y, z = m(N1), m(3), m(5)
        return {
            "indexing": [((x, y), {"indexing": "ij"}), ((x, y, z), {"indexing": "xy"})],
        }
    if op in ("tril", "triu"):
        return {"k": [((a,), {"k": 1}), ((cube,), {"k": -2}), ((m(5, 9),), {"k": 7})]}
    if op == "astype":
        return {
            "copy": [
                ((a, m.dt), {"copy": False}),
                ((a, m.dt), {"copy": True}),
                ((a, _other_dtype(m)), {"copy": False}),
            ],
            "device": [((a, _other_dtype(m)), default)],
        }
    return {}
