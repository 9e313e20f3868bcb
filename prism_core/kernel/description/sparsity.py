"""Structured sparsity as data: the N:M patterns a device's matrix units exploit (at most N
nonzero values in every M consecutive ones), the data types and operations each applies to
and the speed-up over dense (a device file's ``sparsity``, format 2), with the checks the
schema cannot make and the sentences requirements give about them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from prism_core.kernel.public import home

__all__ = [
    "DEFAULT_OPERATIONS", "PATTERN", "Sparsity", "parse_sparsity", "pattern_problem",
    "patterns_text", "sparsity_problems",
]  # fmt: skip

#: ``N:M`` as the schema accepts it (the semantic check adds N < M).
PATTERN = re.compile(r"^([1-9][0-9]{0,2}):([1-9][0-9]{0,2})$")
#: The operations an entry applies to when it names none.
DEFAULT_OPERATIONS = ("matmul",)


@home("prism_core.hardware")
@dataclass(frozen=True)
class Sparsity:
    """One structured-sparsity pattern of a device: at most ``kept`` nonzero values in every
    ``group`` consecutive ones (``pattern``, ``"2:4"``), for ``data_types`` in ``operations``,
    at ``speedup`` times the dense rate (the vendor's sparse figure over its dense one: what
    the pattern gains at best)."""

    pattern: str
    data_types: tuple[str, ...]
    speedup: float
    operations: tuple[str, ...] = DEFAULT_OPERATIONS
    description: str = ""

    @property
    def kept(self) -> int:
        """N of N:M: the most nonzero values a group may hold."""
        return int(self.pattern.partition(":")[0])

    @property
    def group(self) -> int:
        """M of N:M: the size of a group."""
        return int(self.pattern.partition(":")[2])

    @property
    def density(self) -> float:
        """The share of values a pattern keeps, N/M."""
        return self.kept / self.group

    def applies(self, op: str | None = None, dtype: str | None = None) -> bool:
        """Whether the pattern speeds up ``op`` in ``dtype`` (``None``: any)."""
        return (op is None or op in self.operations) and (dtype is None or dtype in self.data_types)


def parse_sparsity(entries: Iterable[Mapping[str, Any]]) -> tuple[Sparsity, ...]:
    """The ``sparsity`` entries of a resolved (validated) description, in the file's order."""
    return tuple(
        Sparsity(
            str(e["pattern"]),
            tuple(e["data_types"]),
            float(e["speedup"]),
            tuple(e.get("operations") or DEFAULT_OPERATIONS),
            str(e.get("description", "")),
        )
        for e in entries
    )


def pattern_problem(text: str) -> str | None:
    """Why ``text`` is not an N:M pattern with N < M (``None``: it is one)."""
    found = PATTERN.match(text)
    if found is None:
        return f"{text!r} is not an N:M pattern such as '2:4'"
    kept, group = int(found.group(1)), int(found.group(2))
    if kept < group:
        return None
    if kept == group:
        return (
            f"{text!r} keeps every value of a group: it is dense, not sparse (N must be less "
            "than M)"
        )
    return (
        f"{text!r} keeps {kept} of every {group} values, more than the group holds (N must be "
        f"less than M; did you mean '{group}:{kept}'?)"
    )


def sparsity_problems(doc: Mapping[str, object]) -> Iterator[tuple[tuple[str | int, ...], str]]:
    """What the schema cannot say of a document's ``sparsity``: N less than M, a speed-up of
    at most M/N (the pattern keeps N of every M values: skipping the rest saves at most that
    share of the work), and each (pattern, operation, data type) given by one entry.  Yields
    (path, message)."""
    entries = doc.get("sparsity")
    if not isinstance(entries, list):
        return
    seen: dict[tuple[str, str, str], int] = {}
    for i, entry in enumerate(entries):
        if not isinstance(entry, Mapping) or not isinstance(entry.get("pattern"), str):
            continue
        pattern = entry["pattern"]
        why = pattern_problem(pattern)
        if why is not None:
            yield ("sparsity", i, "pattern"), f"sparsity pattern {why}"
            continue
        kept, group = (int(n) for n in pattern.split(":"))
        speedup = entry.get("speedup")
        if isinstance(speedup, (int, float)) and speedup * kept > group * (1 + 1e-9):
            yield (
                ("sparsity", i, "speedup"),
                f"speedup {speedup:g} is more than pattern {pattern} can give: it keeps {kept} of "
                f"every {group} values, so skipping the zeros makes it at most "
                f"{group / kept:g} times (M/N) as fast as dense; give a speedup of at most "
                f"{group / kept:g}",
            )
        ops = entry.get("operations") or DEFAULT_OPERATIONS
        for j, dtype in enumerate(entry.get("data_types") or ()):
            for op in ops:
                key = (pattern, str(op), str(dtype))
                if key in seen:
                    yield (
                        ("sparsity", i, "data_types", j),
                        f"sparsity entries {seen[key] + 1} and {i + 1} both give pattern "
                        f"{pattern} for {op} in {dtype}; give each one entry",
                    )
                else:
                    seen[key] = i


def patterns_text(entries: Sequence[Sparsity]) -> str:
    """The distinct patterns of ``entries``, in order: ``"2:4"``, ``"4:16, 4:12, ..."``."""
    return ", ".join(dict.fromkeys(e.pattern for e in entries))
