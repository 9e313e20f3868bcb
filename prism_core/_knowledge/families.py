"""The op families of the Array API declared as tables, gathered.

:data:`FAMILIES` maps each family's name to its rows (``optable.TableOp``), in the order of the
standard's documentation; :data:`TABLE_OPS` is every row.  The elementwise functions have a
table of their own (``elementwise.py``): theirs is a different shape of row.

A pure module: it imports the family tables and nothing else.
"""

from __future__ import annotations

from prism_core._knowledge import (
    creation,
    fft_functions,
    linalg_functions,
    manipulation,
    searching,
    statistics,
)
from prism_core._knowledge.optable import RESULTS, WORK_KINDS, TableOp

__all__ = ["FAMILIES", "TABLE_OPS"]

#: Family -> its ops, each a row of its table.
FAMILIES: dict[str, tuple[TableOp, ...]] = {
    "creation": creation.ROWS,
    "manipulation": manipulation.ROWS,
    "searching": searching.ROWS,
    "statistics": statistics.ROWS,
    "linalg": linalg_functions.ROWS,
    "fft": fft_functions.ROWS,
}

#: Every op of the tables, in family order.
TABLE_OPS: tuple[TableOp, ...] = tuple(row for rows in FAMILIES.values() for row in rows)


def _check() -> None:
    """Rows that contradict themselves fail at import, naming the row: a mistake in a table is
    found by the first test that imports Prism, not by a user."""
    seen: set[str] = set()
    for row in TABLE_OPS:
        where = f"op table row {row.name!r}"
        if row.name in seen:
            raise ValueError(f"{where}: declared twice")
        seen.add(row.name)
        if row.work not in WORK_KINDS:
            raise ValueError(f"{where}: work {row.work!r} is not one of {WORK_KINDS}")
        if row.result not in RESULTS:
            raise ValueError(f"{where}: result {row.result!r} is not one of {RESULTS}")
        if not row.signature.startswith("(") or not row.signature.endswith(")"):
            raise ValueError(f"{where}: signature {row.signature!r} must be '(...)'")
        if ":" not in row.numpy:
            raise ValueError(f"{where}: numpy {row.numpy!r} must be 'module:attribute'")
        if not set(row.sequences) <= set(row.array_args or ()):
            raise ValueError(f"{where}: sequences {row.sequences} must be among its array_args")


_check()
