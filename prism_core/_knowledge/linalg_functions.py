"""The Array API's linear algebra functions and the ``linalg`` extension, declared as data (issue
12): ``matrix_transpose``, ``tensordot``, ``vecdot`` and the ``linalg`` functions Prism did not
have (``det``, ``slogdet``, ``pinv``, ...).

One :class:`~prism_core._knowledge.optable.TableOp` per op (``optable.py`` says what each field
means and who reads it).  A pure module: it imports nothing of Prism but ``optable`` and no array
library.
"""

from __future__ import annotations

from prism_core._knowledge.optable import TableOp

__all__ = ["ROWS"]

ROWS: tuple[TableOp, ...] = ()
