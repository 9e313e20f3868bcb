"""The conformance suite's inputs for the op families of the Array API declared as tables,
one module per family (``_knowledge/families.py``), each with

* ``DTYPES``: op -> the dtypes it is checked in (its first: the dtype of the keyword checks);
* ``input_cases(op, m)``: ``{shape: (args, kwargs)}`` made with ``m`` (``_inputs.Maker``), ``{}``
  where the op has no case in that dtype, ``None`` when ``op`` is not the family's;
* ``keyword_cases(op, m)`` (optional): ``{keyword: [(args, kwargs), ...]}``, or ``None``.

``_standard`` asks each family; a family imports only ``_inputs``, never the suite.
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
