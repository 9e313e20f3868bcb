"""The conformance suite's inputs for the op families of the Array API declared as tables
(issue 12): one module per family (``_knowledge/families.py``), each with

* ``DTYPES``: op -> the dtypes it is checked in (its first: the dtype of the keyword checks);
* ``input_cases(op, m)``: ``{shape: (args, kwargs)}`` of NumPy arguments for ``op`` made with
  ``m`` (``_conformance._Maker``, of the dtype being checked), ``{}`` where the op has no case
  in that dtype, or ``None`` when ``op`` is not the family's;
* ``keyword_cases(op, m)`` (optional): ``{keyword: [(args, kwargs), ...]}`` exercising each
  keyword argument the op documents, or ``None`` for another family's op.

``_conformance`` merges them into its own ``DTYPES`` and ``input_cases``.
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


# The family modules import the suite's helpers from ``_conformance``, which merges their
# ``DTYPES`` when it is imported: importing it here, once ``modules`` exists, makes importing a
# family module first (``prism_core.testing._cases.fft``) load the suite first.
from prism_core.testing import _conformance as _conformance  # noqa: E402
