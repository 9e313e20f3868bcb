"""The conformance suite's inputs, one module per op family of the records
(``kernel/records/families.py``), each with

* ``input_cases(op, m)``: ``{shape: (args, kwargs)}`` made with ``m`` (``_inputs.Maker``) for
  any op of the family, ``{}`` where the op has no case in that dtype;
* ``keyword_cases(op, m)`` (optional): ``{keyword: [(args, kwargs), ...]}``, ``{}`` for an op
  without keyword cases.

The dtypes each op is checked in are its record's (``OpRecord.dtypes``); ``_standard`` asks the
family of the op (``families.FAMILY_OF``).  A family imports ``_inputs`` and the records, never
the suite.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from prism_core.kernel.records.families import FAMILIES

__all__ = ["MODULES", "module", "modules"]

#: The families' modules, by name (``prism_core.testing._cases.<name>``), in the order of
#: ``families.FAMILIES``.
MODULES: tuple[str, ...] = tuple(FAMILIES)


def module(family: str) -> ModuleType:
    """The case module of ``family`` (one of :data:`MODULES`), imported."""
    if family not in MODULES:
        raise ValueError(f"family {family!r} is not one of {MODULES}")
    return importlib.import_module(f"{__name__}.{family}")


def modules() -> list[ModuleType]:
    """The families' case modules, imported, in the order of :data:`MODULES`."""
    return [module(name) for name in MODULES]
