"""Every builtin op's record, gathered by family.

:data:`FAMILIES` maps each family's name to its records (``oprecord.OpRecord``), in the order
of the standard's documentation, the ops beyond it last; :data:`RECORDS` is every record and
:data:`FAMILY_OF` the family of each op (the conformance suite runs that family's cases).  The
records are checked when this module is imported: a record that contradicts itself fails the
first test that imports Prism, naming the op.  A pure module: it imports the family modules and
nothing else.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from prism_core.kernel.oprecord import KINDS, RESULTS, WORK_KINDS, OpRecord
from prism_core.kernel.records import (
    creation,
    elementwise,
    extras,
    fft_functions,
    linalg_functions,
    manipulation,
    searching,
    statistics,
)

__all__ = ["FAMILIES", "FAMILY_OF", "RECORDS"]

#: Family -> its ops' records.
FAMILIES: Mapping[str, tuple[OpRecord, ...]] = MappingProxyType(
    {
        "creation": creation.ROWS,
        "elementwise": elementwise.RECORDS,
        "manipulation": manipulation.ROWS,
        "searching": searching.ROWS,
        "statistics": statistics.ROWS,
        "linalg": linalg_functions.ROWS,
        "fft": fft_functions.ROWS,
        "extras": extras.ROWS,
    }
)

#: Every builtin op's record, in family order.
RECORDS: tuple[OpRecord, ...] = tuple(r for records in FAMILIES.values() for r in records)

#: Op name -> its family.
FAMILY_OF: Mapping[str, str] = MappingProxyType(
    {r.name: family for family, rs in FAMILIES.items() for r in rs}
)

#: The dtypes a record may name (those of the conformance suite).
_DTYPES = frozenset(
    ("bool", "int32", "int64", "float32", "float64", "complex64", "complex128")
)  # fmt: skip


def _check(records: tuple[OpRecord, ...]) -> None:
    names = {r.name for r in records}
    seen: set[str] = set()
    aliases: set[str] = set()
    for r in records:
        where = f"op record {r.name!r}"
        if r.name in seen:
            raise ValueError(f"{where}: declared twice")
        seen.add(r.name)
        if r.work not in WORK_KINDS:
            raise ValueError(f"{where}: work {r.work!r} is not one of {WORK_KINDS}")
        if r.result not in RESULTS:
            raise ValueError(f"{where}: result {r.result!r} is not one of {RESULTS}")
        if r.kinds is not None and r.kinds not in KINDS:
            raise ValueError(f"{where}: kinds {r.kinds!r} is not one of {KINDS}")
        if not r.signature.startswith("(") or not r.signature.endswith(")"):
            raise ValueError(f"{where}: signature {r.signature!r} must be '(...)'")
        if ":" not in r.numpy:
            raise ValueError(f"{where}: numpy {r.numpy!r} must be 'module:attribute'")
        if not set(r.sequences) <= set(r.array_args or ()):
            raise ValueError(f"{where}: sequences {r.sequences} must be among its array_args")
        if not set(r.promoted) <= set(r.array_args or ()):
            raise ValueError(f"{where}: promoted {r.promoted} must be among its array_args")
        if not set(r.dtypes) <= _DTYPES:
            raise ValueError(f"{where}: dtypes {r.dtypes} must be among {sorted(_DTYPES)}")
        for alias in r.aliases:
            if alias in names or alias in aliases:
                raise ValueError(f"{where}: alias {alias!r} is already an op's name or alias")
            aliases.add(alias)


_check(RECORDS)
