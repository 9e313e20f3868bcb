"""The Array API's statistical and utility functions, declared as data (issue 12): ``prod``,
``var``, ``cumulative_prod``, ``all``, ``any`` and ``diff``.

One :class:`~prism_core._knowledge.optable.TableOp` per op (``optable.py`` says what each field
means and who reads it).  A pure module: it imports nothing of Prism but ``optable`` and no array
library.
"""

from __future__ import annotations

from prism_core._knowledge.optable import TableOp

__all__ = ["ROWS"]

ROWS: tuple[TableOp, ...] = ()
