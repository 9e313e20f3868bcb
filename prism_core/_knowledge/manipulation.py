"""The Array API's manipulation and indexing functions, declared as data (issue 12):
``broadcast_arrays``, ``broadcast_to``, ``flip``, ``permute_dims``, ``repeat``, ``roll``,
``squeeze``, ``tile``, ``unstack``, ``take`` and ``take_along_axis``.

One :class:`~prism_core._knowledge.optable.TableOp` per op (``optable.py`` says what each field
means and who reads it).  A pure module: it imports nothing of Prism but ``optable`` and no array
library.
"""

from __future__ import annotations

from prism_core._knowledge.optable import TableOp

__all__ = ["ROWS"]

ROWS: tuple[TableOp, ...] = ()
