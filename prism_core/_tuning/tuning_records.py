"""The tuning records: which variant of an op measured fastest on this host, kept across processes.

The tuner (layer 4) records each outcome here as a :class:`TuningEntry` (``tuning_entries.py``);
dispatch (layer 3) reads the process-wide :func:`records` when it builds a plan.  This module
only stores: it measures nothing and imports nothing above the knowledge layer.
:class:`TuningStore` keeps one JSON file per :func:`host_fingerprint`, merged under a lock and
replaced atomically; a fault never stops a computation (a :class:`TuningCacheWarning`; the file
moved aside, or the records kept in memory).  Where, what the fingerprint covers, the faults
and the cost: docs/performance.md, "The tuning cache".
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import threading
import time
import warnings
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from prism_core._tuning.fingerprint import Fingerprint, compute_fingerprint
from prism_core._tuning.tuning_entries import Key, TuningEntry, TuningRecords, thawed
from prism_core.kernel import events as _events
from prism_core.kernel.config import cache_dir, cache_enabled
from prism_core.kernel.errors import PrismWarning, describe_exception, user_stacklevel
from prism_core.kernel.public import home

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "TuningCacheWarning",
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


def host_fingerprint() -> Fingerprint:
    """The fingerprint of this host and process's software (``fingerprint.py``).

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
        fingerprint = compute_fingerprint()
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
            out[device] = json.loads(json.dumps(thawed(values), allow_nan=False))
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
