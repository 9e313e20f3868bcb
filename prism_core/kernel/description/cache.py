"""The validation cache: device files already validated, keyed by the SHA-256 of their bytes
(a second start reads and hashes each file, but neither parses nor validates it).

* The key of the whole cache covers what decides a valid file's document: Prism's version, the
  Python, the schema and the source of the validation code (:func:`validation_code_digest`);
  under another key the cache starts afresh.
* The entries are signed with the cache directory's own key (``device-files.key``, made by the
  first writer): a cache file damaged, cut short, copied from elsewhere or rewritten by anything
  but Prism does not check out, and none of its entries is used (counted in
  :attr:`ValidationCache.dropped`); such a file is validated again.

docs/device-files.md, section 8 ("Validation cache").
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from prism_core.kernel.errors import debug
from prism_core.kernel.version import __version__

if TYPE_CHECKING:
    from prism_core.kernel.description.yaml_loader import JSON

__all__ = [
    "MAX_STALE_ENTRIES", "VALIDATION_SOURCES", "ValidationCache", "digest",
    "validation_code_digest",
]  # fmt: skip

_FILE = "device-files-v2.json"
_SECRET_FILE = "device-files.key"
_SECRET_BYTES = 32
#: Entries kept besides those of the files loaded in the run that writes the cache.
MAX_STALE_ENTRIES = 4096
#: The modules (in this package) whose code decides what a valid file's document is: find and
#: read the file, parse its YAML, validate it, and store and trust cache entries.  Their source
#: is part of the cache key.  tests/test_validation_cache.py checks that every module validation
#: imports is either listed here or cannot change a document.
VALIDATION_SOURCES = (
    "device_files.py",
    "yaml_loader.py",
    "schema.py",
    "cache.py",
    "numeric_formats.py",
    "sparsity.py",
    "topology.py",
    "throughput.py",
)
_PACKAGE = Path(__file__).resolve().parent


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def validation_code_digest(directory: Path | None = None) -> str | None:
    """SHA-256 of the source of :data:`VALIDATION_SOURCES` in ``directory`` (this package's,
    read once per process, by default); ``None`` when one cannot be read (then nothing can be
    cached safely)."""
    if directory is None:
        return _own_code_digest()
    h = hashlib.sha256()
    for name in VALIDATION_SOURCES:
        try:
            data = (directory / name).read_bytes()
        except OSError:
            return None
        h.update(name.encode() + b"\0" + len(data).to_bytes(8, "big") + data)
    return h.hexdigest()[:16]


@functools.lru_cache(maxsize=1)
def _own_code_digest() -> str | None:
    return validation_code_digest(_PACKAGE)


class ValidationCache:
    """A JSON file mapping content digests to validated documents, signed by its writer."""

    def __init__(self, directory: Path | None, schema_bytes: bytes) -> None:
        code = validation_code_digest()
        if code is None:
            debug("validation cache disabled: the source of %s is missing", _PACKAGE)
            directory = None
        self.directory = directory
        python = sys.implementation.cache_tag  # the `re` of another Python may refuse a pattern
        self.key = f"{__version__}:{python}:{digest(schema_bytes)[:16]}:{code}"
        self._entries: dict[str, dict[str, JSON]] | None = None
        self._refused: set[str] = set()  # the entries of a cache file that did not check out
        self._used: dict[str, None] = {}  # keys used in this run, in order of use
        self._dirty = False
        self.hits = self.misses = 0
        #: Files whose entry was found but refused (then validated again, as misses).
        self.dropped = 0

    @property
    def path(self) -> Path | None:
        return None if self.directory is None else self.directory / _FILE

    def _load(self) -> dict[str, dict[str, JSON]]:
        if self._entries is None:
            self._entries = {}
            try:
                self._entries = self._read()
            except FileNotFoundError:
                pass
            except (OSError, ValueError, KeyError, TypeError, RecursionError) as exc:
                debug("ignoring the validation cache %s: %s", self.path, exc)
        return self._entries

    def _read(self) -> dict[str, dict[str, JSON]]:
        if self.directory is None:
            return {}
        secret = _read_secret(self.directory)
        if secret is None:
            return {}  # no writer has signed anything here
        raw = json.loads((self.directory / _FILE).read_bytes())
        if not isinstance(raw, dict) or raw.get("key") != self.key:
            return {}  # another Prism, Python, schema or validation code: start afresh
        text = raw["entries"]
        entries = json.loads(text)
        if not isinstance(entries, dict):
            raise ValueError("the entries are not a mapping")
        if raw["mac"] != _signature(secret, self.key, text):
            self._refused = set(entries)
            raise ValueError("not signed with this directory's key")
        return entries

    def get(self, key: str, data: bytes) -> dict[str, JSON] | None:
        """The validated document of the file whose bytes are ``data`` (``key`` is their
        digest), or ``None``: not cached, or in a cache file that was refused."""
        entry = self._load().get(key)
        document = entry["document"] if entry is not None and entry["size"] == len(data) else None
        if isinstance(document, dict):
            self.hits += 1
            self._used[key] = None
            return document
        if key in self._refused:
            self.dropped += 1
        self.misses += 1
        return None

    def put(self, key: str, data: bytes, document: dict[str, JSON]) -> None:
        """Record ``document`` as the validated content of ``data`` (whose digest is ``key``)."""
        entries = self._load()
        entry: dict[str, JSON] = {"sha256": key, "size": len(data), "document": document}
        if entries.get(key) != entry:
            entries[key] = entry
            self._dirty = True
        self._used[key] = None

    def save(self) -> None:
        """Write the cache if it changed; atomically, and silently give up on any OS error."""
        path = self.path
        if not self._dirty or path is None or self._entries is None:
            return
        entries = self._entries
        # Least recently used first: entries not used in this run keep the order of the last
        # write (oldest first), and are followed by this run's, in order of use.
        stale = [k for k in entries if k not in self._used]
        keep = stale[max(0, len(stale) - MAX_STALE_ENTRIES) :]
        ordered = {k: entries[k] for k in keep}
        ordered.update((k, entries[k]) for k in self._used if k in entries)
        text = json.dumps(ordered, separators=(",", ":"))
        try:
            secret = _made_secret(path.parent)
            if secret is None:
                raise OSError("cannot make or read the key of the cache directory")
            mac = _signature(secret, self.key, text)
            payload = json.dumps({"key": self.key, "mac": mac, "entries": text})
            _write_aside(path, payload.encode("utf-8"), os.replace)
        except OSError as exc:
            debug("could not write validation cache %s: %s", path, exc)
            return
        self._entries = ordered
        self._dirty = False


def _signature(secret: bytes, key: str, text: str) -> str:
    return hashlib.blake2b(f"{key}\0{text}".encode(), key=secret).hexdigest()


def _read_secret(directory: Path) -> bytes | None:
    try:
        secret = (directory / _SECRET_FILE).read_bytes()
    except OSError:
        return None
    return secret if len(secret) == _SECRET_BYTES else None


def _made_secret(directory: Path) -> bytes | None:
    """The directory's key, made first if there is none (or replaced, if damaged)."""
    secret = _read_secret(directory)
    if secret is None:
        # A new key is linked into place: it never shows half-written, and the first writer's
        # stays (a second link fails), so that no writer leaves another's cache file unsigned.
        path = directory / _SECRET_FILE
        try:
            _write_aside(path, os.urandom(_SECRET_BYTES), os.replace if path.exists() else os.link)
        except FileExistsError:
            debug("another process made the key of %s first", directory)
        secret = _read_secret(directory)
    return secret


def _write_aside(path: Path, data: bytes, land: Callable[[str, Path], None]) -> None:
    """Write ``data`` to a new file beside ``path`` and ``land`` it there (a reader never sees
    a half-written file)."""
    import tempfile  # only when writing: keeps `import prism_core` light

    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".device-files-", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        land(tmp, path)
    finally:
        Path(tmp).unlink(missing_ok=True)
