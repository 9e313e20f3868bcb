"""The Array API's creation and data-type functions, declared as data (issue 12): ``arange``,
``linspace``, ``eye``, ``empty``, the ``*_like`` functions, ``meshgrid``, ``tril``, ``triu`` and
``astype``.

One :class:`~prism_core._knowledge.optable.TableOp` per op (``optable.py`` says what each field
means and who reads it).  A pure module: it imports nothing of Prism but ``optable`` and no array
library.
"""

from __future__ import annotations

from prism_core._knowledge.optable import TableOp

__all__ = ["ROWS"]

ROWS: tuple[TableOp, ...] = ()
