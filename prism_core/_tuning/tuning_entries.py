"""Tuning entries: which variant of an op measured fastest, for one device, data type, size
bucket and set of variants (:class:`TuningEntry`), and an immutable set of them with the
calibration measured beside them (:class:`TuningRecords`).  ``tuning_records.py`` keeps them
across processes.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from prism_core.kernel.public import home

if TYPE_CHECKING:
    from prism_core._tuning.fingerprint import Fingerprint

__all__ = ["DECIDED", "Key", "TuningEntry", "TuningRecords", "thawed"]


#: What decided an entry's winner (two words of ``HOW_DECIDED``, docs/performance.md):
#: ``"measured"``, the winner is significantly faster than the others; ``"tie"``, none is
#: significantly faster than the declared first, so the declared order stands.
DECIDED = ("measured", "tie")


# -- one measured choice --------------------------------------------------------------------

Key = tuple[str, str, str, int, tuple[str, ...]]


def _text(value: Any, name: str) -> str:
    if not isinstance(value, str) or not value:
        raise ValueError(f"{name} must be a non-empty string, not {value!r}")
    return value


def _count(value: Any, name: str, least: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise ValueError(f"{name} must be an integer >= {least}, not {value!r}")
    return value


def _seconds(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{name} must be a number of seconds, not {value!r}")
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"{name} must be finite and >= 0, not {value!r}")
    return float(value)


def _names(value: Any, name: str) -> tuple[str, ...]:
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        raise ValueError(f"{name} must be a list of variant names, not {value!r}")
    names = tuple(sorted(_text(v, f"{name}[]") for v in value))
    if not names:
        raise ValueError(f"{name} must name at least one variant")
    if len(set(names)) != len(names):
        raise ValueError(f"{name} names a variant twice: {list(names)}")
    return names


def _shapes(value: Any) -> tuple[tuple[int, ...], ...]:
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        raise ValueError(f"shapes must be a list of shapes, not {value!r}")
    out = []
    for shape in value:
        if isinstance(shape, str) or not isinstance(shape, (list, tuple)):
            raise ValueError(f"a shape must be a list of integers, not {shape!r}")
        out.append(tuple(_count(n, "a shape's extent") for n in shape))
    return tuple(out)


@home("prism_core.tuning")
@dataclass(frozen=True)
class TuningEntry:
    """One measured choice: for ``op`` on ``device`` in ``dtype`` at size ``bucket``, among the
    variants ``variants``, ``winner`` is the one to call.

    ``device`` is a device type (``"generic.x86-64-v3"``), ``dtype`` a Prism data type name
    (``"fp64"``), ``bucket`` a :func:`bucket_of`.  ``variants`` are the names of the variants
    measured, sorted: the set the choice was made among, so that a new or a lost variant does
    not inherit a choice it took no part in.  ``times`` are seconds per call, the robust
    statistic the tuner used, for the variants it could time.  ``decided`` is ``"measured"``
    when ``winner`` was significantly faster than the others (it is then the fastest,
    declared first or not), ``"tie"`` when none was significantly faster than the declared
    first and ``winner`` is the declared first.  ``shapes`` are the example argument shapes
    measured, ``repeats`` the timed calls per variant, ``measured_at`` when (seconds since the
    epoch).

    The constructor checks all of this and raises ``ValueError`` saying what is wrong.
    """

    op: str
    device: str
    dtype: str
    bucket: int
    variants: tuple[str, ...]
    times: Mapping[str, float] = field(hash=False)
    winner: str
    decided: str
    shapes: tuple[tuple[int, ...], ...]
    repeats: int
    measured_at: float

    def __post_init__(self) -> None:
        _text(self.op, "op")
        _text(self.device, "device")
        _text(self.dtype, "dtype")
        _count(self.bucket, "bucket")
        variants = _names(self.variants, "variants")
        if not isinstance(self.times, Mapping):
            raise ValueError(f"times must map variant names to seconds, not {self.times!r}")
        times = {
            _text(k, "a times key"): _seconds(v, f"times[{k!r}]") for k, v in self.times.items()
        }
        strangers = sorted(set(times) - set(variants))
        if strangers:
            raise ValueError(f"times has variants that were not measured: {strangers}")
        winner = _text(self.winner, "winner")
        if winner not in variants:
            raise ValueError(f"winner {winner!r} is not among the variants {list(variants)}")
        if self.decided not in DECIDED:
            raise ValueError(f"decided must be one of {list(DECIDED)}, not {self.decided!r}")
        if self.decided == "measured":
            if winner not in times:
                raise ValueError(f"winner {winner!r} was measured, but has no time")
            fastest = min(times.values())
            if times[winner] > fastest:
                raise ValueError(
                    f"winner {winner!r} ({times[winner]:.3g} s) was measured, but is not the "
                    f"fastest ({fastest:.3g} s)"
                )
        object.__setattr__(self, "variants", variants)
        object.__setattr__(self, "times", MappingProxyType(times))
        object.__setattr__(self, "shapes", _shapes(self.shapes))
        _count(self.repeats, "repeats", least=1)
        object.__setattr__(self, "measured_at", _seconds(self.measured_at, "measured_at"))

    @property
    def key(self) -> Key:
        """``(op, device, dtype, bucket, variants)``: what an entry is a choice for."""
        return (self.op, self.device, self.dtype, self.bucket, self.variants)

    def as_dict(self) -> dict[str, Any]:
        """Plain data that :func:`json.dumps` accepts; :meth:`from_dict` reads it back."""
        return {
            "op": self.op,
            "device": self.device,
            "dtype": self.dtype,
            "bucket": self.bucket,
            "variants": list(self.variants),
            "times": dict(self.times),
            "winner": self.winner,
            "decided": self.decided,
            "shapes": [list(s) for s in self.shapes],
            "repeats": self.repeats,
            "measured_at": self.measured_at,
        }

    @classmethod
    def from_dict(cls, data: Any) -> TuningEntry:
        """The entry ``data`` (as :meth:`as_dict` gives it) describes.

        :raises ValueError: ``data`` is not such a mapping, lacks or adds a key, or a value is
            malformed; the message says which.
        """
        if not isinstance(data, Mapping):
            raise ValueError(f"an entry must be a JSON object, not {type(data).__name__}")
        missing = sorted(_FIELDS - data.keys())
        extra = sorted(data.keys() - _FIELDS, key=str)
        if missing or extra:
            parts = [f"missing {missing}" if missing else "", f"unknown {extra}" if extra else ""]
            raise ValueError("entry keys: " + ", ".join(p for p in parts if p))
        return cls(**data)


_FIELDS = frozenset(TuningEntry.__dataclass_fields__)


def _normalized_key(op: str, device: str, dtype: str, bucket: int, variants: Iterable[str]) -> Key:
    return (op, device, dtype, bucket, tuple(sorted(variants)))


# -- the records ----------------------------------------------------------------------------


def _frozen(value: Any) -> Any:
    """A read-only copy of JSON data: mappings become mapping proxies, lists tuples."""
    if isinstance(value, Mapping):
        return MappingProxyType({str(k): _frozen(v) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        return tuple(_frozen(v) for v in value)
    return value


def thawed(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: thawed(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return [thawed(v) for v in value]
    return value


@home("prism_core.tuning")
class TuningRecords:
    """An immutable set of tuning entries (one per :attr:`TuningEntry.key`) and calibration.

    ``calibration`` maps a device key (a device type) to the JSON object the tuner measured for
    it (for the performance model); it is read-only.  ``fingerprint`` is that of the host the
    records are for, where known.
    """

    __slots__ = ("_by_key", "_by_op", "_sizes_matter", "calibration", "fingerprint")

    def __init__(
        self,
        entries: Iterable[TuningEntry] = (),
        calibration: Mapping[str, Any] | None = None,
        fingerprint: Fingerprint | None = None,
    ) -> None:
        by_key: dict[Key, TuningEntry] = {}
        for entry in entries:
            if not isinstance(entry, TuningEntry):
                raise TypeError(f"expected TuningEntry objects, got {type(entry).__name__}")
            by_key[entry.key] = entry  # a later entry replaces an earlier one
        ordered = sorted(by_key.values(), key=lambda e: e.key)
        self._by_key: Mapping[Key, TuningEntry] = MappingProxyType({e.key: e for e in ordered})
        by_op: dict[str, list[TuningEntry]] = {}
        for entry in ordered:
            by_op.setdefault(entry.op, []).append(entry)
        self._by_op: Mapping[str, tuple[TuningEntry, ...]] = MappingProxyType(
            {op: tuple(found) for op, found in by_op.items()}
        )
        self._sizes_matter = frozenset(op for op, found in by_op.items() if _winners_vary(found))
        self.calibration: Mapping[str, Any] = _frozen(calibration or {})
        self.fingerprint = fingerprint

    def lookup(
        self, op: str, device: str, dtype: str, bucket: int, variants: Iterable[str]
    ) -> TuningEntry | None:
        """The entry for ``op`` on ``device`` in ``dtype`` at ``bucket`` measured among exactly
        the variants ``variants`` (in any order), or ``None``.  Another set of variants does
        not match: the choice was not made among them."""
        return self._by_key.get(_normalized_key(op, device, dtype, bucket, variants))

    @property
    def entries(self) -> tuple[TuningEntry, ...]:
        """Every entry, sorted by key."""
        return tuple(self._by_key.values())

    def for_op(self, op: str) -> tuple[TuningEntry, ...]:
        """The entries of ``op``, sorted by key."""
        return self._by_op.get(op, ())

    def ops(self) -> tuple[str, ...]:
        """The ops with entries, sorted."""
        return tuple(self._by_op)

    def sizes_matter(self, op: str) -> bool:
        """Whether the winner of ``op`` depends on the size: some (device, dtype, variants) has
        different winners in different buckets.  Dispatch adds the size bucket to its plan key
        for such an op only."""
        return op in self._sizes_matter

    def __len__(self) -> int:
        return len(self._by_key)

    def __iter__(self) -> Iterator[TuningEntry]:
        return iter(self._by_key.values())

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TuningRecords):
            return NotImplemented
        same_entries = dict(self._by_key) == dict(other._by_key)
        return same_entries and thawed(self.calibration) == thawed(other.calibration)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"<TuningRecords: {len(self)} entries for {len(self._by_op)} ops>"

    def as_dict(self) -> dict[str, Any]:
        """Plain data that :func:`json.dumps` accepts."""
        return {
            "entries": [e.as_dict() for e in self.entries],
            "calibration": thawed(self.calibration),
        }


def _winners_vary(entries: Iterable[TuningEntry]) -> bool:
    # A tie keeps the declared order and a measured gap reorders by time: the same winner at
    # two sizes can stand for two orders (a threaded batch variant that declines
    # small batches was the declared first of the large ones, measured slower there), so a
    # tie and a measurement differ as two winners do.
    winners: dict[tuple[str, str, tuple[str, ...]], set[tuple[str, str]]] = {}
    for e in entries:
        winners.setdefault((e.device, e.dtype, e.variants), set()).add((e.winner, e.decided))
    return any(len(w) > 1 for w in winners.values())
