"""The installed distributions: their names, entry points and versions, as importlib.metadata
gives them, read from the ``.dist-info`` directories where the environment is plain (its import
and scan add about 19 ms to a first call: benchmarks/results/reimplementations-2026-11-27.md).
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Union

if TYPE_CHECKING:
    from importlib import metadata

__all__ = ["EntryPoint", "distribution_names", "distribution_version", "entry_points"]

#: An entry point as importlib.metadata gives it, or as read here (the same attributes).
EntryPoint = Union["metadata.EntryPoint", "_EntryPoint"]


def entry_points(group: str) -> list[EntryPoint]:
    """The entry points of ``group`` (``prism.plugins``, ``prism.commands``) of the installed
    distributions, sorted by name, as ``importlib.metadata.entry_points(group=...)`` gives them;
    read afresh at every call, so that the next discovery sees a plugin installed or removed."""
    found = _installed(fresh=True)
    eps: list[EntryPoint] = []
    try:
        if found is None:
            raise _Unusual("not a plain environment")
        for dist in found.values():
            eps.extend(dist.entry_points(group))
    except _Unusual:
        import importlib.metadata

        eps = list(importlib.metadata.entry_points(group=group))
    return sorted(eps, key=lambda ep: ep.name)


def distribution_version(name: str) -> str | None:
    """``importlib.metadata.version(name)``, or ``None`` where ``name`` is not installed."""
    found = _installed()
    if found is not None:
        dist = found.get(_normalize(name))
        return None if dist is None else dist.version
    from importlib import metadata

    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def distribution_names() -> list[str]:
    """The normalized names (``cupy_rocm_7_0``) of the installed distributions."""
    found = _installed()
    if found is not None:
        return list(found)
    from importlib import metadata

    return [_normalize(n) for d in metadata.distributions() if (n := d.metadata["Name"])]


# -- reading installed distributions without importlib.metadata: only its ``PathFinder``'s
# case (``*.dist-info``, ``*.egg-info`` in ``sys.path`` directories, the first of each name
# winning); another finder, a zip file or an unusual metadata file is left to it.
class _Unusual(Exception):
    """Something only importlib.metadata reads as it should: let it."""


class _Distribution:
    """One ``.dist-info`` or ``.egg-info`` directory (or file) found on ``sys.path``."""

    __slots__ = ("_fields", "path")

    def __init__(self, path: str) -> None:
        self.path = path
        self._fields: dict[str, str | None] | None = None

    def read_text(self, filename: str) -> str | None:
        """As ``importlib.metadata.PathDistribution.read_text``."""
        path = os.path.join(self.path, filename) if filename else self.path
        try:
            with open(path, encoding="utf-8") as fh:
                return fh.read()
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError):
            return None
        except (OSError, ValueError) as exc:  # importlib.metadata raises these: let it
            raise _Unusual(str(exc)) from None

    def _field(self, key: str) -> str | None:
        if self._fields is None:
            try:
                names = ("METADATA", "PKG-INFO", "")  # "": an .egg-info file that is the metadata
                text = next((t for t in map(self.read_text, names) if t), "")
                self._fields = _header_fields(text, ("name", "version"))
            except _Unusual:
                from importlib.metadata import Distribution

                metadata = Distribution.at(self.path).metadata
                self._fields = {"name": metadata["Name"], "version": metadata["Version"]}
        return self._fields[key]

    @property
    def name(self) -> str | None:
        return self._field("name")

    @property
    def version(self) -> str | None:
        return self._field("version")

    def entry_points(self, group: str) -> list[_EntryPoint]:
        """The entry points of ``group``, read from ``entry_points.txt`` as importlib.metadata
        reads it (every line checked, since a malformed one makes it raise)."""
        text = self.read_text("entry_points.txt")
        if text is None:
            return []
        out = []
        section = None
        for line in map(str.strip, text.splitlines()):
            if not line or line.startswith("#"):
                continue
            if line.startswith("[") and line.endswith("]"):
                section = line.strip("[]")
                continue
            if section is None:
                continue
            name, eq, value = line.partition("=")
            if not eq:
                raise _Unusual(f"{self.path}: entry_points.txt line {line!r} has no '='")
            if section == group:
                out.append(_EntryPoint(name.strip(), value.strip(), group, self))
        return out


def _header_fields(text: str, keys: Sequence[str]) -> dict[str, str | None]:
    """The first value of each of ``keys`` (lower case) in the header block of a metadata file,
    as the e-mail parser of importlib.metadata reads a one-line header."""
    import re

    out: dict[str, str | None] = dict.fromkeys(keys)
    # Lines as the e-mail parser has them (the file was read with universal newlines): not
    # ``splitlines()``, which also splits at form feeds and other separators.
    lines = text.split("\n")
    for n, line in enumerate(lines):
        if not line:
            break  # the end of the headers
        if line[0] in " \t":
            continue  # the continuation of a header not asked for (see below)
        if not re.match(r"[\x21-\x39\x3b-\x7e]*:", line):
            raise _Unusual(f"{line!r} is not a header")  # the parser ends the headers there
        key, _, value = line.partition(":")
        key = key.lower()
        if key not in out or out[key] is not None:
            continue
        if n + 1 < len(lines) and lines[n + 1][:1] in (" ", "\t"):
            raise _Unusual(f"the {key} header continues on the next line")
        out[key] = value.lstrip(" \t")
    return out


class _EntryPoint:
    """An entry point, as ``importlib.metadata.EntryPoint`` has it (what discovery uses)."""

    __slots__ = ("dist", "group", "name", "value")

    def __init__(self, name: str, value: str, group: str, dist: _Distribution) -> None:
        self.name = name
        self.value = value
        self.group = group
        self.dist = dist

    def load(self) -> object:
        """Import the module and get the attribute the value names (``module:attr.attr``)."""
        import re

        match = re.match(
            r"(?P<module>[\w.]+)\s*(:\s*(?P<attr>[\w.]+)\s*)?((?P<extras>\[.*\])\s*)?$", self.value
        )
        if match is None:
            raise ValueError(
                f"entry point {self.name!r} = {self.value!r} names no module; write "
                "'package.module' or 'package.module:attribute'"
            )
        obj = importlib.import_module(match.group("module"))
        for attr in (match.group("attr") or "").split("."):
            if attr:
                obj = getattr(obj, attr)
        return obj

    def __repr__(self) -> str:
        return f"EntryPoint(name={self.name!r}, value={self.value!r}, group={self.group!r})"


def _normalize(name: str) -> str:
    import re

    return re.sub(r"[-_.]+", "_", name).lower()


#: sys.path entry -> (its mtime, the paths of the distributions in it by normalized name), as
#: importlib.metadata caches a directory's listing until its modification time changes.
_listings: dict[str, tuple[int, dict[str, str]]] = {}


def _installed(*, fresh: bool = False) -> dict[str, _Distribution] | None:
    """Every distribution importlib.metadata finds, by normalized name, in its order (``None``:
    only it can say).  A directory's listing is kept until its mtime changes; ``fresh``
    (discovery) lists again: a plugin installed within the timestamp's resolution is seen."""
    from importlib.machinery import PathFinder

    for finder in sys.meta_path:
        if finder is not PathFinder and getattr(finder, "find_distributions", None) is not None:
            return None
    found: dict[str, _Distribution] = {}
    for entry in list(sys.path):
        if not isinstance(entry, str):
            return None
        root = entry or "."
        if os.path.basename(entry).lower().endswith(".egg"):
            return None
        try:
            mtime = os.stat(root).st_mtime_ns
        except OSError:
            continue  # importlib.metadata finds nothing there either
        listed = None if fresh else _listings.get(entry)
        if listed is None or listed[0] != mtime:
            try:
                names = os.listdir(root)
            except NotADirectoryError:
                return None  # a zip file: importlib.metadata reads those
            except OSError:
                continue
            dists: dict[str, str] = {}
            for child in names:
                low = child.lower()
                if not low.endswith((".dist-info", ".egg-info")):
                    continue
                if not child.endswith((".dist-info", ".egg-info")):
                    return None  # named by its metadata there, not by the directory
                key = _normalize(low.rpartition(".")[0].partition("-")[0])
                dists.setdefault(key, os.path.join(entry, child))
            listed = _listings[entry] = (mtime, dists)
        for key, path in listed[1].items():
            if key not in found:
                found[key] = _Distribution(path)
    return found
