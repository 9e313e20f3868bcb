"""The Array API's searching, set and sorting functions, declared as data (issue 12): ``argsort``,
``nonzero``, ``searchsorted``, ``count_nonzero``, ``isin`` and the ``unique_*`` family.

One :class:`~prism_core._knowledge.optable.TableOp` per op (``optable.py`` says what each field
means and who reads it).  A pure module: it imports nothing of Prism but ``optable`` and no array
library.
"""

from __future__ import annotations

from prism_core._knowledge.optable import TableOp

__all__ = ["ROWS"]

ROWS: tuple[TableOp, ...] = ()
