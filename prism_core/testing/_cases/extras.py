"""The conformance suite's inputs for the ops beyond the standard's families (see ``__init__``):
``convolve`` of pairs of vectors, ``requires_grad`` and ``detach`` of vectors of every layout.
``random.normal`` has none: its numbers are the backend's own (its record checks no dtype)."""

from __future__ import annotations

from prism_core.testing._inputs import N1, Case, Maker, keyword_arrays, one_arg_cases

__all__ = ["input_cases", "keyword_cases"]


def input_cases(op: str, m: Maker) -> dict[str, Case]:
    """NumPy arguments for ``op`` by shape, made with ``m``; ``{}`` for an op without cases."""
    # Drawn first for every op: the arrays of the other cases follow these numbers.
    one_arg = one_arg_cases(m)
    if op in ("requires_grad", "detach"):
        return one_arg
    if op == "convolve":
        return {
            "standard": ((m(N1), m(64)), {}),
            "one": ((m(1), m(1)), {}),
            "odd": ((m(N1 + 1), m(63)), {}),
            "strided": ((m.strided(N1), m.strided(64)), {}),
        }
    return {}


def keyword_cases(op: str, m: Maker) -> dict[str, list[Case]]:
    """The calls that exercise each keyword argument ``op`` documents, made with ``m``; ``{}``
    for an op without keywords."""
    if op == "requires_grad":
        x = m(N1)
        return {"flag": [((x,), {"flag": False}), ((x,), {"flag": True})]}
    if op == "convolve":
        x, _, _, _ = keyword_arrays(m)
        v = m(64)
        return {"mode": [((x, v), {"mode": "same"}), ((x, v), {"mode": "valid"})]}
    return {}
