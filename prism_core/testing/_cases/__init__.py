"""The conformance suite's inputs for the op families of the Array API declared as tables:
one module per family (``_knowledge/families.py``), each with

* ``DTYPES``: op -> the dtypes it is checked in (its first: the dtype of the keyword checks);
* ``input_cases(op, m)``: ``{shape: (args, kwargs)}`` of NumPy arguments for ``op`` made with
  ``m`` (``_inputs.Maker``, of the dtype being checked), ``{}`` where the op has no case
  in that dtype, or ``None`` when ``op`` is not the family's;
* ``keyword_cases(op, m)`` (optional): ``{keyword: [(args, kwargs), ...]}`` exercising each
  keyword argument the op documents, or ``None`` for another family's op.

``_standard`` (the suite's standard inputs) imports this package: it merges the families'
``DTYPES`` into its own when it is imported, and its ``input_cases`` and ``keyword_cases`` ask
each family.  The families import
only ``prism_core.testing._inputs`` (the arrays the suite shares with them), never the suite.
"""

from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["MODULES", "modules"]

#: The families' modules, by name (``prism_core.testing._cases.<name>``).
MODULES: tuple[str, ...] = ("creation", "manipulation", "searching", "statistics", "linalg", "fft")


def modules() -> list[ModuleType]:
    """The families' case modules, imported."""
    return [importlib.import_module(f"{__name__}.{name}") for name in MODULES]
