"""The validation cache: device files already validated, keyed by the SHA-256 of their bytes.

A second start reads each file and hashes it, but neither parses its YAML nor validates it: the
cache holds the validated document.  The cache key includes Prism's version and the schema's
hash, so a new schema or release starts a fresh cache.  Any failure to read or write the cache
(read-only home, corrupt file, concurrent writers) only costs speed, never correctness: the
entries are stored as one JSON text with its SHA-256 beside it, and a file whose text does not
match its checksum is ignored whole.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from pathlib import Path
from typing import Any

from prism_core._version import __version__

__all__ = ["ValidationCache", "digest"]

logger = logging.getLogger("prism_core")

_FILE = "device-files-v1.json"
_MAX_ENTRIES = 4096


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class ValidationCache:
    """A JSON file mapping content digests to validated documents."""

    def __init__(self, directory: Path | None, schema_bytes: bytes) -> None:
        self.directory = directory
        self.key = f"{__version__}:{digest(schema_bytes)[:16]}"
        self._entries: dict[str, Any] | None = None
        self._dirty = False
        self.hits = 0
        self.misses = 0

    @property
    def path(self) -> Path | None:
        return None if self.directory is None else self.directory / _FILE

    def _load(self) -> dict[str, Any]:
        if self._entries is not None:
            return self._entries
        self._entries = {}
        path = self.path
        if path is None:
            return self._entries
        try:
            raw = json.loads(path.read_bytes())
            if not isinstance(raw, dict) or raw.get("key") != self.key:
                return self._entries  # another Prism version or schema: start afresh
            text = raw["entries"]
            if digest(text.encode("utf-8")) != raw["checksum"]:
                raise ValueError("checksum mismatch")
            entries = json.loads(text)
            if not isinstance(entries, dict):
                raise ValueError("entries are not a mapping")
        except FileNotFoundError:
            return self._entries
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            logger.debug("ignoring damaged validation cache %s: %s", path, exc)
            return self._entries
        self._entries = entries
        return self._entries

    def get(self, key: str) -> Any:
        value = self._load().get(key)
        if value is None:
            self.misses += 1
        else:
            self.hits += 1
        return value

    def put(self, key: str, document: Any) -> None:
        entries = self._load()
        if entries.get(key) != document:
            entries[key] = document
            self._dirty = True

    def save(self) -> None:
        """Write the cache if it changed; atomically, and silently give up on any OS error."""
        path = self.path
        if not self._dirty or path is None or self._entries is None:
            return
        entries = self._entries
        if len(entries) > _MAX_ENTRIES:  # keep the newest; dicts keep insertion order
            entries = dict(list(entries.items())[-_MAX_ENTRIES:])
        text = json.dumps(entries, separators=(",", ":"))
        payload = json.dumps(
            {"key": self.key, "checksum": digest(text.encode("utf-8")), "entries": text}
        )
        import tempfile  # only when writing: keeps `import prism_core` light

        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".device-files-", dir=path.parent)
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as fh:
                    fh.write(payload)
                os.replace(tmp, path)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        except OSError as exc:
            logger.debug("could not write validation cache %s: %s", path, exc)
            return
        self._dirty = False
