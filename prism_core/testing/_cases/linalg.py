"""The conformance suite's inputs for the linalg family of the Array API (see ``__init__``)."""

from __future__ import annotations

from typing import Any

from prism_core.testing._conformance import Case, _Maker

__all__ = ["DTYPES", "input_cases"]

#: Op -> the dtypes the suite checks it in.
DTYPES: dict[str, tuple[str, ...]] = {}


def input_cases(op: str, m: _Maker) -> dict[str, Case] | None:
    """NumPy arguments for ``op`` by shape, made with ``m``; ``None`` for another family's op."""
    if op not in DTYPES:
        return None
    cases: dict[str, Any] = {}
    return cases
