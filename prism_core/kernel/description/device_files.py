"""Device files on the search path: the path itself, finding the files, reading one.

The search path, lowest precedence first: the library shipped with Prism (``hardware/``), the
directories of plugins (in plugin order), the ``PRISM_HARDWARE_PATH`` entries.  Each entry is a
directory, searched recursively (links followed, loops and unreadable entries reported), or one
file.  A file is read safely (a regular file, at most ``MAX_BYTES``), then taken from the
validation cache or parsed and validated.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prism_core.kernel.config import data_dir, user_hardware_path
from prism_core.kernel.description import MAX_BYTES
from prism_core.kernel.description.cache import ValidationCache, digest
from prism_core.kernel.errors import Problem, display_path
from prism_core.kernel.public import home

__all__ = [
    "DeviceFile", "SearchEntry", "add_search_path_provider", "default_search_path", "files_of",
    "read_device_file", "read_file_bytes", "scan_directory",
]  # fmt: skip

SUFFIXES = (".yaml", ".yml")


@home("prism_core.hardware")
@dataclass(frozen=True)
class SearchEntry:
    """One entry of the search path: a directory (searched recursively) or a single file."""

    path: Path
    origin: str  # "builtin", "plugin:<name>", "user", "command line"
    #: An explicit list of files, for an entry made of files named on a command line.
    files: tuple[Path, ...] | None = None


class DeviceFile:
    """One device file, read and validated, before inheritance.  (Not a dataclass: making one
    costs about a millisecond of every fresh process.)"""

    __slots__ = ("data", "entry", "path")

    def __init__(self, path: Path, data: dict[str, Any], entry: SearchEntry) -> None:
        self.path = path
        self.data = data
        self.entry = entry

    def __repr__(self) -> str:
        return f"DeviceFile(path={self.path!r}, data={self.data!r}, entry={self.entry!r})"

    @property
    def device_type(self) -> str:
        return str(self.data["device_type"])

    @property
    def parents(self) -> tuple[str, ...]:
        ext = self.data.get("extends", ())
        return (ext,) if isinstance(ext, str) else tuple(ext)

    def locate(self, *path: str | int, key: bool = True) -> tuple[int, int]:
        """Line and column of a key, re-reading the file (rare: only when reporting a problem)."""
        from prism_core.kernel.description.yaml_loader import parse_yaml

        raw, _ = read_file_bytes(self.path)
        if raw is None:
            return (0, 0)
        parsed, _ = parse_yaml(raw, str(self.path))
        return parsed.locate(tuple(path), key=key) if parsed else (0, 0)


#: What the layers above add to the default search path, between the shipped library and
#: ``PRISM_HARDWARE_PATH``: each returns ``(path, origin)`` pairs.  Plugin discovery adds the
#: plugins' device directories (``prism_core.kernel.devices``); this layer never calls up.
_providers: list[Callable[[], Iterable[tuple[Path, str]]]] = []


def add_search_path_provider(provider: Callable[[], Iterable[tuple[Path, str]]]) -> None:
    """Add ``provider`` to the default search path (its entries follow the shipped library)."""
    if provider not in _providers:
        _providers.append(provider)


def default_search_path() -> list[SearchEntry]:
    """The search path in effect: shipped library, plugin directories, ``PRISM_HARDWARE_PATH``."""
    entries = [SearchEntry(data_dir("hardware"), "builtin")]
    for provider in list(_providers):
        entries.extend(SearchEntry(path, origin) for path, origin in provider())
    entries.extend(SearchEntry(e.path, "user") for e in user_hardware_path())
    return entries


#: What ``stat`` calls each kind of file that is neither a regular file nor a directory.
_KINDS = (
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISDIR, "a directory"),
)


def _kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "a special file")


def _not_regular(mode: int) -> str:
    return f"not a regular file ({_kind(mode)}); device files are regular files"


def _is_loop(exc: OSError) -> bool:
    # ELOOP on POSIX; ERROR_CANT_RESOLVE_FILENAME (1921) on Windows.
    return exc.errno == errno.ELOOP or getattr(exc, "winerror", None) == 1921


def _unreachable(exc: OSError, path: Path, what: str) -> str:
    """Why ``path`` (a file or a directory: ``what``) cannot be reached, and what to do."""
    if _is_loop(exc):
        return (
            "symbolic link loop: following the link never reaches a file or directory; "
            "remove the link or point it at a device file or directory"
        )
    if exc.errno == errno.ENOENT and os.path.islink(path):
        try:
            target = os.readlink(path)
        except OSError:
            target = "?"
        return (
            f"broken symbolic link to {target!r} (the target does not exist); remove the link "
            "or point it at a device file or directory"
        )
    if exc.errno in (errno.ENOENT, errno.ENOTDIR):
        return "no such file or directory"
    return f"cannot read the {what}: {exc.strerror or exc}"


def _located(path: Path, message: str) -> Problem:
    return Problem(display_path(path), 0, 0, "$", message)


def scan_directory(root: Path, root_stat: os.stat_result) -> tuple[list[Path], list[Problem]]:
    """Every device file under ``root`` (sorted), and a problem for whatever cannot be searched.

    Symbolic links are followed.  A link to a directory that contains it (a loop) is reported
    and not followed; a directory reached again through another link is searched once.  Broken
    links, link loops, unreadable directories and device-named entries that are not regular
    files (FIFOs, devices, sockets) are reported, never skipped in silence.  Iterative: no
    directory tree can exhaust the stack.
    """
    files: list[Path] = []
    problems: list[Problem] = []
    root_id = (root_stat.st_dev, root_stat.st_ino)
    seen = {root_id}
    # Each directory to search, with its ancestors (identity -> path) for finding loops.
    stack: list[tuple[Path, dict[tuple[int, int], Path]]] = [(root, {root_id: root})]
    while stack:
        directory, ancestors = stack.pop()
        try:
            with os.scandir(directory) as it:
                children = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            why = f"cannot read the directory: {exc.strerror or exc}; make it readable or remove "
            problems.append(_located(directory, why + "it from the search path"))
            continue
        subdirectories: list[tuple[Path, dict[tuple[int, int], Path]]] = []
        for child in children:
            path = Path(child.path)
            try:
                if child.is_symlink():
                    st = os.stat(path)  # follows the link
                    mode = st.st_mode
                elif child.is_file(follow_symlinks=False):
                    st, mode = None, stat.S_IFREG
                else:
                    st = child.stat(follow_symlinks=False)
                    mode = st.st_mode
            except OSError as exc:
                problems.append(_located(path, _unreachable(exc, path, "file")))
                continue
            if stat.S_ISDIR(mode):
                assert st is not None
                ident = (st.st_dev, st.st_ino)
                if ident in ancestors:
                    problems.append(
                        _located(
                            path,
                            f"symbolic link loop: leads back to {display_path(ancestors[ident])!r}"
                            ", which contains it, so it is not searched again; remove the link",
                        )
                    )
                elif ident not in seen:  # else: reached through another link, searched once
                    seen.add(ident)
                    subdirectories.append((path, {**ancestors, ident: path}))
            elif path.suffix in SUFFIXES:
                if stat.S_ISREG(mode):
                    files.append(path)
                else:
                    problems.append(_located(path, _not_regular(mode)))
        stack.extend(reversed(subdirectories))
    return sorted(files), problems


def files_of(entry: SearchEntry) -> tuple[list[Path], list[Problem]]:
    if entry.files is not None:
        return list(entry.files), []
    path = entry.path
    where = "PRISM_HARDWARE_PATH entry" if entry.origin == "user" else f"{entry.origin} path"
    try:
        st = os.stat(path)
    except OSError as exc:
        return [], [_located(path, f"{where} {str(path)!r}: {_unreachable(exc, path, 'file')}")]
    if stat.S_ISDIR(st.st_mode):
        return scan_directory(path, st)
    if stat.S_ISREG(st.st_mode):
        return [path], []
    return [], [
        _located(
            path,
            f"{where} {str(path)!r}: not a regular file or directory ({_kind(st.st_mode)}); "
            "an entry is a directory of device files or one device file",
        )
    ]


def read_file_bytes(path: Path) -> tuple[bytes | None, Problem | None]:
    """The bytes of a device file, or the located reason why they cannot be had.

    Refuses, before reading anything, what is not a regular file (opening a FIFO or a device
    could block or never end) and what is larger than the limit; then reads at most the limit
    and one byte more, so a file that grows while it is read cannot cost more memory either.
    """

    def refuse(message: str) -> tuple[None, Problem]:
        return None, _located(path, message)

    def too_big(size: int, more: str = "") -> tuple[None, Problem]:
        message = f"the file is {more}{size:,} bytes; device files may be at most {MAX_BYTES:,}"
        return None, Problem(display_path(path), 1, 1, "$", message)  # as the YAML reader says

    try:
        st = os.stat(path)
    except OSError as exc:
        return refuse(_unreachable(exc, path, "file"))
    if not stat.S_ISREG(st.st_mode):
        return refuse(_not_regular(st.st_mode))
    if st.st_size > MAX_BYTES:
        return too_big(st.st_size)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        return refuse(_unreachable(exc, path, "file"))
    try:
        st = os.fstat(fd)  # what was opened, which may have been replaced since the stat
        if not stat.S_ISREG(st.st_mode):
            return refuse(_not_regular(st.st_mode))
        if st.st_size > MAX_BYTES:
            return too_big(st.st_size)
        chunks: list[bytes] = []
        left = MAX_BYTES + 1
        while left > 0:
            chunk = os.read(fd, left)
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    except OSError as exc:
        return refuse(f"cannot read the file: {exc.strerror or exc}")
    finally:
        os.close(fd)
    if left <= 0:
        return too_big(MAX_BYTES, "more than ")
    return b"".join(chunks), None


def read_device_file(
    path: Path, entry: SearchEntry, cache: ValidationCache | None
) -> tuple[DeviceFile | None, list[Problem]]:
    """Read, parse and validate one file (or take it from the cache)."""
    raw, problem = read_file_bytes(path)
    if raw is None:
        assert problem is not None
        return None, [problem]
    key = digest(raw)
    if cache is not None:
        cached = cache.get(key, raw)  # validated by this code before; else None
        if cached is not None:
            return DeviceFile(path, cached, entry), []
    from prism_core.kernel.description.schema import validate_parsed
    from prism_core.kernel.description.yaml_loader import parse_yaml

    label = display_path(path)
    parsed, problems = parse_yaml(raw, label)
    if parsed is None or problems:
        return None, problems
    problems = validate_parsed(parsed, label)
    if problems:
        return None, problems
    if cache is not None:
        cache.put(key, raw, parsed.value)
    return DeviceFile(path, parsed.value, entry), []
