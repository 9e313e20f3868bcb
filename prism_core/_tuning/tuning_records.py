"""The tuning records: which variant of an op measured fastest on this host, kept across processes.

The tuner (layer 4) records each outcome here as a :class:`TuningEntry`; dispatch (layer 3)
reads the process-wide :func:`records` when it builds a plan.  This module only stores: it
measures nothing and imports nothing above the knowledge layer.  :class:`TuningStore` keeps one
JSON file per :func:`host_fingerprint`, merged under a lock and replaced atomically; a fault
never stops a computation (a :class:`TuningCacheWarning`; the file moved aside, or the records
kept in memory).  Where, what the fingerprint covers, the faults and the cost:
docs/performance.md, "The tuning cache".
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import platform
import re
import sys
import threading
import time
import warnings
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from prism_core.kernel import events as _events
from prism_core.kernel.config import cache_dir, cache_enabled
from prism_core.kernel.errors import PrismWarning, describe_exception, user_stacklevel
from prism_core.kernel.public import home
from prism_core.kernel.version import __version__

__all__ = [
    "DECIDED",
    "FORMAT",
    "FORMAT_VERSION",
    "Fingerprint",
    "TuningCacheWarning",
    "TuningEntry",
    "TuningRecords",
    "TuningStore",
    "bucket_of",
    "default_store",
    "host_fingerprint",
    "records",
    "reload",
]

#: The ``format`` and ``version`` a tuning file declares.
FORMAT = "prism-tuning"
FORMAT_VERSION = 1
#: What decided an entry's winner (two words of ``HOW_DECIDED``, docs/performance.md):
#: ``"measured"``, the winner is significantly faster than the others; ``"tie"``, none is
#: significantly faster than the declared first, so the declared order stands.
DECIDED = ("measured", "tie")
#: Seconds :meth:`TuningStore.record` and :meth:`TuningStore.clear` wait for the lock.
LOCK_TIMEOUT_S = 10.0


@home("prism_core.tuning")
class TuningCacheWarning(PrismWarning):
    """The tuning cache could not be read or written as it should: what is wrong, and what
    Prism did instead (moved a damaged file aside, kept records in memory).  Warned once per
    process and problem; the computation goes on."""


def bucket_of(*sizes: int) -> int:
    """The size bucket of a call whose array arguments have ``sizes`` elements.

    ``sum(sizes).bit_length()``: bucket ``b`` holds the calls whose arrays have between
    ``2**(b-1)`` and ``2**b - 1`` elements in all (bucket 0: no element), so that sizes within
    a factor of two share their measurements.  A 256x256 matmul (2 x 65,536 elements) is in
    bucket 18, a 1000x1000 one in bucket 21.
    """
    return sum(sizes).bit_length()


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


def _thawed(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _thawed(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return [_thawed(v) for v in value]
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
        return same_entries and _thawed(self.calibration) == _thawed(other.calibration)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"<TuningRecords: {len(self)} entries for {len(self._by_op)} ops>"

    def as_dict(self) -> dict[str, Any]:
        """Plain data that :func:`json.dumps` accepts."""
        return {
            "entries": [e.as_dict() for e in self.entries],
            "calibration": _thawed(self.calibration),
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


# -- the host fingerprint -------------------------------------------------------------------


def _digest_of(components: Mapping[str, str]) -> str:
    text = json.dumps(sorted(components.items()), separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True)
class Fingerprint:
    """What the measurements of a host depend on: ``components`` (name -> value, both text),
    and ``digest``, a short SHA-256 of them (sorted) that names the host's tuning file.

    Build one with :meth:`of`; the constructor checks that ``digest`` is that of
    ``components``.
    """

    components: Mapping[str, str] = field(hash=False)
    digest: str

    def __post_init__(self) -> None:
        if not isinstance(self.components, Mapping) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in self.components.items()
        ):
            raise ValueError("fingerprint components must map names to strings")
        components = MappingProxyType(dict(sorted(self.components.items())))
        object.__setattr__(self, "components", components)
        if self.digest != _digest_of(components):
            raise ValueError(
                f"digest {self.digest!r} is not that of the components; use Fingerprint.of()"
            )

    @classmethod
    def of(cls, components: Mapping[str, str]) -> Fingerprint:
        return cls(components, _digest_of(components))

    def differences(self, other: Mapping[str, Any]) -> list[str]:
        """What differs between these components and ``other`` (another host's), one phrase
        per component, sorted: ``"cpu.brand: 'X' here, 'Y' there"``."""
        out = []
        for name in sorted(set(self.components) | set(other), key=str):
            mine, theirs = self.components.get(name), other.get(name)
            if mine != theirs:
                out.append(f"{name}: {mine!r} here, {theirs!r} there")
        return out

    def as_dict(self) -> dict[str, Any]:
        return {"digest": self.digest, "components": dict(self.components)}


_REQUIREMENT_NAME = re.compile(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


def _distribution_version(name: str) -> str:
    """The installed version of distribution ``name`` (never imported), or why there is none."""
    version = _versions.get(name)
    if version is None:
        from prism_core.kernel import plugins as _plugins

        # Plugin discovery reads distributions without importing importlib.metadata, which
        # costs ~35 ms in a fresh process; where that reader is absent, ask
        # importlib.metadata.
        read = getattr(_plugins, "distribution_version", None)
        try:
            found = read(name) if read is not None else _metadata_version(name)
            version = "not installed" if found is None else found or "unknown"
        except Exception as exc:  # a broken installation's metadata
            version = f"unreadable ({type(exc).__name__})"
        _versions[name] = version
    return version


def _metadata_version(name: str) -> str | None:
    from importlib import metadata

    try:
        dist = metadata.distribution(name)
    except metadata.PackageNotFoundError:
        return None
    # The Version header, read without parsing the whole METADATA as an e-mail message, which
    # costs milliseconds for the long ones (SciPy's: 60 kB of licences).
    text = dist.read_text("METADATA") or dist.read_text("PKG-INFO") or ""
    found = _VERSION_HEADER.search(text.split("\n\n", 1)[0])
    return found.group(1) if found else dist.version


_VERSION_HEADER = re.compile(r"^Version:[ \t]*(\S+)[ \t]*$", re.MULTILINE)

#: The environment variables that set the thread counts of CPU libraries (OpenMP, BLAS): part
#: of the fingerprint where set, since they change how fast a CPU variant runs.
THREAD_VARIABLES = (
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "BLIS_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
    "NUMEXPR_NUM_THREADS",
)
#: Distribution versions looked up in this process (they cannot change under loaded modules).
_versions: dict[str, str] = {}


def _cpu_components() -> dict[str, str]:
    from prism_core.kernel.host import detect_cpu

    cpu = detect_cpu()
    flags = hashlib.sha256(" ".join(sorted(cpu.features)).encode()).hexdigest()[:16]
    return {
        "cpu.brand": cpu.brand or "unknown",
        "cpu.name": cpu.name,
        "cpu.flags": flags,
        "cpu.machine": platform.machine(),
        "cpu.count": str(os.cpu_count()),
    }


def _device_components() -> dict[str, str]:
    from prism_core.kernel.host import present_devices

    found = set()
    for inst in present_devices().devices:
        if inst.description.kind == "cpu" and inst.source in ("archspec", "platform"):
            continue  # the host CPU: described by the cpu.* components
        found.add((inst.device_type, inst.uuid or f"{inst.source}:{inst.index}", inst.driver))
    return {
        f"device.{n}": f"{device_type} {uuid} driver {driver or 'unknown'}"
        for n, (device_type, uuid, driver) in enumerate(sorted(found, key=str))
    }


def _software_components() -> dict[str, str]:
    from prism_core.kernel.plugins import Unable, plugins

    out = {
        "prism": __version__,
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "library.numpy": _distribution_version("numpy"),
    }
    for name in THREAD_VARIABLES:  # every CPU library reads some of these
        if name in os.environ:
            out[f"environment.{name}"] = os.environ[name]
    found = plugins()
    for backend in found.backends.values():
        asked = found.backend_settings(backend)  # a plugin's fault is recorded on its plugin
        settings = {"": f"unknown ({asked.error})"} if isinstance(asked, Unable) else dict(asked)
        for key, value in settings.items():
            out[f"setting.{backend.name}.{key}".rstrip(".")] = str(value)
    for record in found.loaded:
        out[f"plugin.{record.name}"] = f"{record.distribution} {record.version}"
        requires = record.info.get("requires") if isinstance(record.info, Mapping) else None
        for requirement in requires if isinstance(requires, (list, tuple)) else ():
            match = _REQUIREMENT_NAME.match(str(requirement))
            if match:
                name = match.group(1).lower().replace("_", "-")
                out[f"library.{name}"] = _distribution_version(name)
    return out


def _compute_fingerprint() -> Fingerprint:
    components: dict[str, str] = {}
    for part in (_cpu_components, _device_components, _software_components):
        try:
            components.update(part())
        except Exception as exc:  # detection never raises; a plugin in strict mode may
            components[part.__name__.strip("_").replace("_", ".")] = (
                f"unknown ({type(exc).__name__})"
            )
    return Fingerprint.of(components)


def host_fingerprint() -> Fingerprint:
    """The fingerprint of this host and process's software (see the module docstring).

    Computed once per process, and again after plugins or devices are loaded again.  It runs
    the host's detection (cached by :func:`present_devices`) and looks up distribution versions
    with :mod:`importlib.metadata`, importing no framework.
    """
    for _ in range(3):
        with _state.lock:
            if _state.fingerprint is not None:
                return _state.fingerprint
            epoch = _state.epoch
        # Not under the lock: computing it may discover plugins, whose announcement takes it.
        fingerprint = _compute_fingerprint()
        with _state.lock:
            # Kept only if no reload happened meanwhile (the plugins discovered by this very
            # computation are one: the next try finds them loaded).
            if _state.epoch == epoch:
                _state.fingerprint = fingerprint
                return fingerprint
    return fingerprint


# -- the store ------------------------------------------------------------------------------


class _Contents:
    """Entries by key and calibration by device key, as read, merged or to be written."""

    __slots__ = ("calibration", "entries")

    def __init__(
        self,
        entries: dict[Key, TuningEntry] | None = None,
        calibration: dict[str, Any] | None = None,
    ) -> None:
        self.entries: dict[Key, TuningEntry] = {} if entries is None else entries
        self.calibration: dict[str, Any] = {} if calibration is None else calibration


def _merged(base: _Contents, top: _Contents) -> _Contents:
    """``base`` with ``top``'s entries (by key) and calibration (by device key) over it."""
    out = _Contents(dict(base.entries), dict(base.calibration))
    out.entries.update(top.entries)
    out.calibration.update(top.calibration)
    return out


class _Unusable(Exception):
    """The file cannot be used as this host's tuning cache: ``kind`` is ``"corrupt"`` or
    ``"foreign"``, the message says why."""

    def __init__(self, kind: str, why: str) -> None:
        super().__init__(why)
        self.kind = kind


class _LockTimeout(Exception):
    """The file lock could not be taken in time (the message says which and how long)."""


@home("prism_core.tuning")
class TuningStore:
    """This host's tuning file in ``directory`` (default: ``<cache dir>/tuning``).

    The file is ``<digest>.json`` for ``fingerprint`` (default: :func:`host_fingerprint`,
    followed as plugins or devices are reloaded).  :meth:`load` reads, :meth:`record` merges
    and writes, :meth:`clear` empties.  No method raises for a fault of the file or directory:
    each is reported (a :class:`TuningCacheWarning` unless ``warn`` is false) and kept in
    :attr:`problems`, and records that cannot be written are kept in this object's memory
    (:attr:`bypassed` says why) and written by the next :meth:`record` that can.  Safe to
    share between threads and processes.  ``PRISM_NO_CACHE=1`` (when the store is made) keeps
    every record in memory and touches no file.
    """

    def __init__(
        self,
        directory: Path | None = None,
        fingerprint: Fingerprint | None = None,
        *,
        lock_timeout: float = LOCK_TIMEOUT_S,
        warn: bool = True,
    ) -> None:
        self.directory = Path(directory) if directory is not None else cache_dir() / "tuning"
        self._fingerprint = fingerprint
        self.lock_timeout = lock_timeout
        self.warn = warn
        #: Whether the file is used at all (``PRISM_NO_CACHE`` unset when the store was made).
        self.enabled = cache_enabled()
        #: What went wrong with the file or directory, in the words reported (oldest first).
        self.problems: list[str] = []
        #: Why records are kept in memory instead of the file (``""``: they are not).
        self.bypassed = (
            ""
            if self.enabled
            else "PRISM_NO_CACHE=1: the tuning cache is neither read nor written; "
            "measurements last for this process"
        )
        # By fingerprint digest, the records not in the file: all of them when the cache is
        # disabled, else those whose write failed.
        self._pending: dict[str, _Contents] = {}
        self._lock = threading.RLock()

    # -- where --------------------------------------------------------------------------------
    @property
    def fingerprint(self) -> Fingerprint:
        return self._fingerprint if self._fingerprint is not None else host_fingerprint()

    @property
    def path(self) -> Path:
        """This host's file: ``<directory>/<digest>.json``."""
        return self._path(self.fingerprint)

    @property
    def lock_path(self) -> Path:
        """The lock file beside it: ``<digest>.json.lock``."""
        return self._lock_path(self._path(self.fingerprint))

    def _path(self, fp: Fingerprint) -> Path:
        return self.directory / f"{fp.digest}.json"

    @staticmethod
    def _lock_path(path: Path) -> Path:
        return path.with_name(path.name + ".lock")

    # -- reading ------------------------------------------------------------------------------
    def load(self) -> TuningRecords:
        """This host's records: the file's, with those this process could not write on top.

        A damaged or foreign file is reported and moved aside (the records are then empty); an
        unreadable one is reported and bypassed.  Nothing is read with ``PRISM_NO_CACHE=1``.
        """
        fp = self.fingerprint
        with self._lock:
            found = self._read(fp, locked=False) if self.enabled else None
            return self._records(fp, _merged(found or _Contents(), self._pending_of(fp)))

    @property
    def unwritten(self) -> TuningRecords:
        """The records this process keeps in memory only: those no :meth:`record` could write
        to the file yet (:attr:`bypassed` says why), every record with ``PRISM_NO_CACHE=1``.
        Empty when the file holds all that was recorded."""
        fp = self.fingerprint
        with self._lock:
            return self._records(fp, self._pending_of(fp))

    def _read(self, fp: Fingerprint, *, locked: bool) -> _Contents | None:
        """The file's contents (empty when there is no file), or ``None`` when it cannot be
        read or a damaged or foreign file cannot be moved aside (then it must not be written
        over either).  A damaged or foreign file is moved aside under the lock: never a file
        another process has just written."""
        path = self._path(fp)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return _Contents()
        except OSError as exc:
            self._bypass(f"{path}: cannot be read ({_describe(exc)}); it is not used")
            return None
        try:
            return self._parse(data, fp, path)
        except _Unusable as problem:
            return _Contents() if self._set_aside(problem, data, path, locked=locked) else None

    def _parse(self, data: bytes, fp: Fingerprint, path: Path) -> _Contents:
        try:
            document = json.loads(data)
        except (ValueError, RecursionError) as exc:  # JSON, UTF-8, or nesting
            raise _Unusable("corrupt", f"not valid JSON: {exc}") from None
        if not isinstance(document, dict):
            raise _Unusable("corrupt", f"a JSON {type(document).__name__}, not an object")
        if document.get("format") != FORMAT:
            raise _Unusable("corrupt", f"format is {document.get('format')!r}, not {FORMAT!r}")
        if document.get("version") != FORMAT_VERSION:
            raise _Unusable(
                "corrupt", f"version is {document.get('version')!r}, not {FORMAT_VERSION}"
            )
        theirs, digest = document.get("fingerprint"), document.get("digest")
        if not isinstance(theirs, dict) or not isinstance(digest, str):
            raise _Unusable("corrupt", "its fingerprint or digest is missing or malformed")
        if theirs != dict(fp.components):
            differences = fp.differences(theirs)
            shown = "; ".join(differences[:3]) + ("; ..." if len(differences) > 3 else "")
            raise _Unusable("foreign", f"it was written for another host: {shown}")
        if digest != fp.digest:
            raise _Unusable("foreign", f"its digest {digest!r} is not this host's {fp.digest!r}")
        entries, calibration = document.get("entries"), document.get("calibration")
        if not isinstance(entries, list) or not isinstance(calibration, dict):
            raise _Unusable("corrupt", "its entries are not a list or calibration not an object")
        contents = _Contents()
        dropped = []
        for n, item in enumerate(entries):
            try:
                entry = TuningEntry.from_dict(item)
            except (ValueError, TypeError) as exc:
                dropped.append(f"entry {n}: {exc}")
                continue
            contents.entries[entry.key] = entry
        for device, values in calibration.items():
            if isinstance(values, dict):
                contents.calibration[device] = values
            else:
                dropped.append(f"calibration of {device!r}: not an object")
        if dropped:
            shown = "; ".join(dropped[:3]) + ("; ..." if len(dropped) > 3 else "")
            self._report(
                f"{path}: {len(dropped)} malformed record(s) ignored ({shown}); the others "
                "are used, and the next record rewrites the file without them"
            )
        return contents

    def _set_aside(self, problem: _Unusable, data: bytes, path: Path, *, locked: bool) -> bool:
        """Move the unusable file ``path`` (whose bytes were ``data``) aside, and report it.
        ``False`` when it could not be moved (reported too: it is not used)."""
        what = {"corrupt": "is damaged", "foreign": "is not this host's"}[problem.kind]
        try:
            with contextlib.ExitStack() as stack:
                if not locked:
                    stack.enter_context(self._file_lock(path))
                    if path.read_bytes() != data:
                        # Replaced since it was read: another process's, not the damaged one.
                        self._report(f"{path} {what} ({problem}); it was replaced meanwhile")
                        return True
                aside = _free_name(path, problem.kind)
                os.replace(path, aside)
        except FileNotFoundError:
            return True  # another process moved it aside, or cleared the cache
        except _LockTimeout as exc:
            self._bypass(f"{path} {what} ({problem}); {exc}, so it stays: it is not used")
            return False
        except OSError as exc:
            self._bypass(
                f"{path} {what} ({problem}), and cannot be moved aside ({_describe(exc)}): it "
                "is not used"
            )
            return False
        never = "; it was never used" if problem.kind == "foreign" else ""
        self._report(
            f"{path} {what} ({problem}); moved aside to {aside.name}{never}, and this host's "
            "tuning cache starts empty"
        )
        return True

    # -- writing ------------------------------------------------------------------------------
    def record(
        self,
        entries: Iterable[TuningEntry] = (),
        calibration: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> TuningRecords:
        """Add ``entries`` (each replaces the one with the same key) and ``calibration``
        (merged per device key: a device's new object replaces its old one), and announce it
        (:data:`prism_core.kernel.events.TUNING`).  Returns this host's records afterwards.

        Under the file's lock: read the file again, merge, write a temporary file beside it,
        ``fsync`` it and ``os.replace`` the file with it.  When that fails (a directory that
        cannot be written or created, a lock held too long), the records are kept in memory
        for this process (reported) and written by the next record that succeeds.

        :raises TypeError: an entry is not a :class:`TuningEntry`, or calibration is not a
            mapping of device keys to JSON objects (mistakes of the caller, not faults).
        """
        new = _Contents()
        for entry in entries:
            if not isinstance(entry, TuningEntry):
                raise TypeError(f"record() takes TuningEntry objects, not {type(entry).__name__}")
            new.entries[entry.key] = entry
        new.calibration = _checked_calibration(calibration)
        fp = self.fingerprint
        with self._lock:
            self._pending[fp.digest] = _merged(self._pending_of(fp), new)
            result = self._write(fp)
        _events.announce(_events.TUNING)
        return result

    def clear(self) -> int:
        """Remove every entry and all calibration of this host: the file (under the lock) and
        what this process kept in memory.  Returns the number of entries removed.  A file that
        cannot be removed is reported, and its entries stay."""
        fp = self.fingerprint
        path = self._path(fp)
        with self._lock:
            removed = len(self._pending.pop(fp.digest, _Contents()).entries)
            # No directory, nothing to clear (and the lock would create it).
            if self.enabled and self.directory.is_dir():
                try:
                    with self._file_lock(path):
                        current = self._read(fp, locked=True)
                        if current is not None:
                            path.unlink(missing_ok=True)
                            removed += len(current.entries)
                except _LockTimeout as exc:
                    self._report(f"{path} was not cleared: {exc}")
                except OSError as exc:
                    self._report(f"{path} could not be cleared ({_describe(exc)})")
        _events.announce(_events.TUNING)
        return removed

    def _write(self, fp: Fingerprint) -> TuningRecords:
        """Under the lock, read the file, merge the pending records into it and write the
        result atomically; on failure keep them pending and say why the cache is bypassed."""
        pending = self._pending_of(fp)
        if not self.enabled:
            return self._records(fp, pending)
        path = self._path(fp)
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            with self._file_lock(path):
                current = self._read(fp, locked=True)
                if current is not None:
                    merged = _merged(current, pending)
                    _write_atomically(path, _document(fp, merged))
        except _LockTimeout as exc:
            self._bypass(f"{exc}; this process's measurements are kept in memory")
        except OSError as exc:
            self._bypass(
                f"{self.directory}: the tuning cache cannot be written ({_describe(exc)}); "
                "this process's measurements are kept in memory"
            )
        else:
            if current is not None:
                self._pending.pop(fp.digest, None)
                self.bypassed = ""
                return self._records(fp, merged)
        return self.load()

    # -- helpers ------------------------------------------------------------------------------
    @contextlib.contextmanager
    def _file_lock(self, path: Path) -> Iterator[None]:
        import filelock  # only when writing: keeps `import prism_core` light

        lock_path = self._lock_path(path)
        lock = filelock.FileLock(str(lock_path), timeout=self.lock_timeout)
        try:
            lock.acquire()
        except filelock.Timeout:
            raise _LockTimeout(
                f"{lock_path}: another process held the tuning cache's lock for more than "
                f"{self.lock_timeout:g} s"
            ) from None
        except OSError as exc:
            # Named here: the messages above it name the directory or the cache file.
            raise type(exc)(exc.errno, f"{exc.strerror or exc}: {lock_path}") from None
        try:
            yield
        finally:
            lock.release()

    def _pending_of(self, fp: Fingerprint) -> _Contents:
        return self._pending.get(fp.digest) or _Contents()

    def _records(self, fp: Fingerprint, contents: _Contents) -> TuningRecords:
        return TuningRecords(contents.entries.values(), contents.calibration, fp)

    def _bypass(self, message: str) -> None:
        self.bypassed = message
        self._report(message)

    def _report(self, message: str) -> None:
        if message not in self.problems:
            self.problems.append(message)
        if not self.warn:
            return
        with _state.lock:
            if message in _state.warned:
                return
            _state.warned.add(message)
        warnings.warn(message, TuningCacheWarning, stacklevel=user_stacklevel())

    def summary(self) -> dict[str, Any]:
        """Where the cache is and in what state (loading it): for ``prism tune --show`` and
        ``prism doctor``."""
        loaded = self.load()
        fp = self.fingerprint
        return {
            "path": str(self._path(fp)),
            "exists": self.enabled and self._path(fp).is_file(),
            "enabled": self.enabled,
            "bypassed": self.bypassed,
            "fingerprint": fp.as_dict(),
            "entries": len(loaded),
            "ops": list(loaded.ops()),
            "problems": list(self.problems),
        }

    def __repr__(self) -> str:
        return f"<TuningStore {self.directory}>"


def _describe(exc: BaseException) -> str:
    text = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    return f"{type(exc).__name__}: {text}"


def _free_name(path: Path, kind: str) -> Path:
    """``<file>.<kind>-<time>`` (``.1``, ``.2``, ... after it if that is taken)."""
    stamp = time.strftime("%Y%m%dT%H%M%S")
    aside = path.with_name(f"{path.name}.{kind}-{stamp}")
    n = 1
    while aside.exists():
        aside = path.with_name(f"{path.name}.{kind}-{stamp}.{n}")
        n += 1
    return aside


def _checked_calibration(calibration: Mapping[str, Any] | None) -> dict[str, Any]:
    if calibration is None:
        return {}
    if not isinstance(calibration, Mapping):
        raise TypeError(f"calibration must map device keys to objects, not {calibration!r}")
    out = {}
    for device, values in calibration.items():
        if not isinstance(device, str) or not isinstance(values, Mapping):
            raise TypeError(
                f"calibration must map device keys (strings) to objects; {device!r} maps to "
                f"{type(values).__name__}"
            )
        try:
            out[device] = json.loads(json.dumps(_thawed(values), allow_nan=False))
        except (TypeError, ValueError) as exc:
            raise TypeError(f"calibration of {device!r} is not plain JSON data: {exc}") from None
    return out


def _document(fp: Fingerprint, contents: _Contents) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "fingerprint": dict(fp.components),
        "digest": fp.digest,
        "entries": [contents.entries[k].as_dict() for k in sorted(contents.entries)],
        "calibration": {k: contents.calibration[k] for k in sorted(contents.calibration)},
    }


def _write_atomically(path: Path, document: Mapping[str, Any]) -> None:
    """Write ``document`` as JSON to a temporary file beside ``path``, ``fsync`` it and move it
    into place: a reader sees the old file or the new one, never a part of either."""
    import tempfile  # only when writing: keeps `import prism_core` light

    text = json.dumps(document, indent=1, allow_nan=False) + "\n"
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}-", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            if hasattr(os, "fchmod"):
                # Readable by all, like any cache file (mkstemp makes it private): a cluster may
                # share a tuned cache read-only.
                os.fchmod(fh.fileno(), 0o644)
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    if sys.platform != "win32":
        # The new directory entry reaches the disk too.
        with contextlib.suppress(OSError):
            dir_fd = os.open(path.parent, os.O_RDONLY)
            try:
                os.fsync(dir_fd)
            finally:
                os.close(dir_fd)


# -- the process-wide records ---------------------------------------------------------------


class _State:
    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.fingerprint: Fingerprint | None = None
        self.epoch = 0  # advanced by every reload of plugins or devices
        self.store: TuningStore | None = None
        #: The records, and the settings and announcements they were loaded under.
        self.records: tuple[tuple[str | None, str | None], TuningRecords] | None = None
        self.generation = 0  # advanced by every announcement this module hears
        self.warned: set[str] = set()


_state = _State()


def _settings() -> tuple[str | None, str | None]:
    # Read on every call: records() is called when a plan is built, not on the hot path.
    return os.environ.get("PRISM_CACHE_DIR"), os.environ.get("PRISM_NO_CACHE")


def default_store() -> TuningStore:
    """The store :func:`records` reads: ``<cache dir>/tuning`` for :func:`host_fingerprint`.

    One per process, made again when ``PRISM_CACHE_DIR`` or ``PRISM_NO_CACHE`` changed; its
    :attr:`~TuningStore.problems` are what ``prism tune --show`` lists.
    """
    with _state.lock:
        store = _state.store
        if (
            store is None
            or store.directory != cache_dir() / "tuning"
            or store.enabled != cache_enabled()
        ):
            store = _state.store = TuningStore()
        return store


def records() -> TuningRecords:
    """This host's tuning records, loaded on first use and again after this process records or
    clears (a :data:`prism_core.kernel.events.TUNING` announcement), reloads plugins or devices,
    changes ``PRISM_CACHE_DIR`` or ``PRISM_NO_CACHE``, or calls :func:`reload`.  Another
    process's records are seen after :func:`reload`.

    Never raises: problems are warned once (:class:`TuningCacheWarning`) and kept in
    ``default_store().problems``.
    """
    settings = _settings()
    found = _state.records
    if found is not None and found[0] == settings:
        return found[1]
    with _state.lock:
        generation = _state.generation
    store = default_store()
    try:
        # Not under the module's lock: loading may discover plugins (see host_fingerprint).
        loaded = store.load()
    except Exception as exc:  # never fatal: a bug here must not stop a computation
        store._report(
            f"{store.directory}: the tuning records could not be loaded "
            f"({describe_exception(exc)}); none are used"
        )
        loaded = TuningRecords()
    with _state.lock:
        if _state.generation == generation:
            _state.records = (settings, loaded)
    return loaded


def reload() -> TuningRecords:
    """Read this host's records again (to see what another process tuned, for example)."""
    with _state.lock:
        _state.records = None
        _state.generation += 1
    return records()


def _on_event(what: str) -> None:
    with _state.lock:
        _state.records = None
        _state.generation += 1
        if what in (_events.PLUGINS, _events.DEVICES):
            # Other plugins or devices: maybe another fingerprint, so another file.
            _state.epoch += 1
            _state.fingerprint = None


_events.subscribe(_on_event)
