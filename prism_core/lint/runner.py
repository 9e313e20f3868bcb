"""Linting sources and files: reading, parsing, the checker, ``# noqa`` and the configuration.

A file is read as Python reads it (its PEP 263 encoding, a UTF-8 byte-order mark), parsed with
:mod:`ast` and checked; nothing is imported or run.  A file that cannot be read or parsed is a
*problem* (a :class:`prism_core.hardware.Problem` naming the file, line and column), and the other
files are linted all the same.  Findings are filtered by the codes in force for the file
(:meth:`LintConfig.codes_for`) and by ``# noqa`` comments on their line, as flake8 reads them:
``# noqa`` alone silences every finding on the line, ``# noqa: PRISM001,PRISM004`` the codes it
lists, and a ``# noqa`` listing only other tools' codes (``# noqa: E501``) none of Prism's.
"""

from __future__ import annotations

import ast
import io
import os
import re
import stat
import tokenize
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from prism_core.kernel.errors import Problem, display_path
from prism_core.lint.checker import Analysis, Report, check, split_lines
from prism_core.lint.codes import by_code
from prism_core.lint.config import LintConfig, load_config

__all__ = [
    "Finding",
    "LintReport",
    "iter_python_files",
    "lint_paths",
    "lint_source",
    "read_source",
]

_NOQA = re.compile(
    r"#\s*noqa(?::[\s]?(?P<codes>[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*))?", re.IGNORECASE
)
#: Directories never walked into (``exclude`` in the configuration adds to these).
_SKIPPED_DIRS = frozenset({"__pycache__", "node_modules", "site-packages"})


@dataclass(frozen=True, order=True)
class Finding:
    """One breach of the guidelines: ``path:line:column: code message`` (line and column
    1-based, the column in characters); ``fixable`` when ``prism lint --fix`` rewrites it."""

    path: str
    line: int
    column: int
    code: str
    message: str = field(compare=False)
    fixable: bool = field(default=False, compare=False)

    __module__ = "prism_core.lint"

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.column}: {self.code} {self.message}"

    @property
    def name(self) -> str:
        """The code's short name (``array-operator``)."""
        return by_code(self.code).name

    def as_dict(self) -> dict[str, object]:
        """The finding as JSON-ready data (``prism lint --json`` prints a list of these)."""
        return {
            "file": self.path,
            "line": self.line,
            "column": self.column,
            "code": self.code,
            "name": self.name,
            "message": self.message,
            "fixable": self.fixable,
        }


@dataclass(frozen=True)
class LintReport:
    """The findings of a run, sorted; the ``problems`` (files that could not be read or
    parsed); how many files and lines were linted."""

    findings: tuple[Finding, ...]
    problems: tuple[Problem, ...] = ()
    files: int = 0
    lines: int = 0

    __module__ = "prism_core.lint"

    @property
    def exit_status(self) -> int:
        """2 when a file could not be linted, else 1 when anything was found, else 0."""
        if self.problems:
            return 2
        return 1 if self.findings else 0


#: The largest file ``prism lint`` reads (a generated module can be large; a data file named
#: ``.py``, or a link to a device, is not read to the end of memory).
MAX_SOURCE_BYTES = 16 * 2**20


class SkippedFile(OSError):
    """A path the lint does not read: not a regular file (a FIFO, a device, a socket), or a
    file over :data:`MAX_SOURCE_BYTES`; its message says which, as the problem reports it."""


def _nonblocking(path: str, flags: int) -> int:
    # Opening a FIFO for reading blocks until a writer comes; O_NONBLOCK returns at once, and
    # fstat then says what it is.  A regular file reads as usual (the flag is cleared).
    fd = os.open(path, flags | getattr(os, "O_NONBLOCK", 0))
    if hasattr(os, "set_blocking"):
        os.set_blocking(fd, True)
    return fd


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISDIR, "a directory"),
    ):
        if test(mode):
            return name
    return "not a file"


def read_source(path: str | os.PathLike[str]) -> tuple[str, str]:
    """The text of the Python file at ``path`` and its encoding, decoded as Python decodes it
    (a coding declaration, a UTF-8 byte-order mark, else UTF-8).  Line endings are kept as they
    are.  Only regular files of at most :data:`MAX_SOURCE_BYTES` are read (else
    :class:`SkippedFile`, an ``OSError``).  Raises ``OSError``, ``SyntaxError`` (an unknown
    encoding) or ``UnicodeDecodeError``."""
    with open(path, "rb", opener=_nonblocking) as f:
        found = os.fstat(f.fileno())
        if not stat.S_ISREG(found.st_mode):
            raise SkippedFile(f"skipped: not a regular file ({_kind(found.st_mode)})")
        if found.st_size > MAX_SOURCE_BYTES:
            raise SkippedFile(
                f"skipped: {found.st_size:,} bytes, over the {MAX_SOURCE_BYTES // 2**20} MiB a "
                "Python source file is linted up to"
            )
        data = f.read(MAX_SOURCE_BYTES + 1)
    encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    return data.decode(encoding), encoding


def noqa_lines(source: str) -> dict[int, frozenset[str] | None]:
    """Line -> the codes its ``# noqa`` comment names (``None``: a bare ``# noqa``, every code).
    Only comments count, not text in strings."""
    if "noqa" not in source.lower():
        return {}
    out: dict[int, frozenset[str] | None] = {}
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
        comments = [(t.start[0], t.string) for t in tokens if t.type == tokenize.COMMENT]
    except (tokenize.TokenError, SyntaxError):  # parsed by ast, so not expected: read lines
        comments = [(i, line) for i, line in enumerate(split_lines(source), 1) if "#" in line]
    for line, text in comments:
        match = _NOQA.search(text)
        if match is None:
            continue
        codes = match.group("codes")
        out[line] = (
            None if codes is None else frozenset(c.upper() for c in re.split(r"[,\s]+", codes))
        )
    return out


def selected(reports: Iterable[Report], source: str, codes: frozenset[str]) -> list[Report]:
    """The reports of the codes in ``codes`` that no ``# noqa`` on their line silences."""
    kept = [r for r in reports if r.code in codes]
    # Tokenizing (to tell a comment from a string) costs as much as the checker: only where a
    # line with a finding mentions noqa at all.
    lines = split_lines(source)
    if not any("noqa" in lines[r.line - 1].lower() for r in kept if r.line <= len(lines)):
        return kept
    noqa = noqa_lines(source)
    out = []
    for r in kept:
        if r.line in noqa:
            silenced = noqa[r.line]
            if silenced is None or r.code in silenced:
                continue
        out.append(r)
    return out


def check_source(
    source: str, path: str | os.PathLike[str] | None, config: LintConfig
) -> tuple[ast.Module, Analysis]:
    """Parse and check ``source``: the tree, and the analysis with only the reports in force
    (the configuration and ``# noqa`` applied).  Raises ``SyntaxError`` (``ValueError`` for a
    null byte, ``RecursionError`` for code nested too deeply to walk)."""
    tree = ast.parse(source, filename=str(path) if path is not None else "<string>")
    analysis = check(
        tree,
        split_lines(source),
        allowed_modules=config.allowed_modules,
        array_types=config.array_types,
    )
    reports = selected(analysis.reports, source, config.codes_for(path))
    return tree, replace(analysis, reports=reports)


def lint_source(
    source: str,
    path: str | os.PathLike[str] | None = None,
    *,
    config: LintConfig | None = None,
) -> list[Finding]:
    """The findings in the Python ``source`` (named ``path`` in them, ``<string>`` without),
    sorted.  ``config`` defaults to the defaults (every code, nothing allowed), not to a
    ``pyproject.toml``.  Raises ``SyntaxError`` when ``source`` does not parse."""
    config = config if config is not None else LintConfig()
    _, analysis = check_source(source, path, config)
    name = display_path(os.fspath(path)) if path is not None else "<string>"
    return sorted(
        Finding(name, r.line, r.column, r.code, r.message, r.fix is not None)
        for r in analysis.reports
    )


def problem_for(path: str | os.PathLike[str], exc: BaseException) -> Problem:
    """The located problem a file that cannot be linted gives (one line: FILE:LINE:COL)."""
    name = display_path(os.fspath(path))
    if isinstance(exc, SyntaxError):
        line = exc.lineno or 1
        column = exc.offset or 1
        return Problem(name, line, column, message=f"cannot parse: {exc.msg}")
    if isinstance(exc, UnicodeDecodeError):
        return Problem(name, 1, 1, message=f"cannot decode: {exc}")
    if isinstance(exc, RecursionError):
        return Problem(name, 1, 1, message="cannot lint: the code is nested too deeply to walk")
    if isinstance(exc, ValueError):  # source code cannot contain null bytes
        return Problem(name, 1, 1, message=f"cannot parse: {exc}")
    if isinstance(exc, SkippedFile):
        return Problem(name, 1, 1, message=str(exc))
    return Problem(name, 1, 1, message=f"cannot read: {exc}")


def iter_python_files(
    paths: Sequence[str | os.PathLike[str]], config: LintConfig
) -> Iterator[Path]:
    """The files to lint: each path that is a file (whatever its suffix), and the ``*.py``
    files under each directory, in sorted order, skipping hidden directories,
    ``__pycache__``, ``site-packages`` and what ``exclude`` names; each file once.  A path that
    does not exist is a ``FileNotFoundError``."""
    seen: set[Path] = set()

    def once(p: Path) -> Iterator[Path]:
        key = p.resolve()
        if key not in seen:
            seen.add(key)
            yield p

    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            for directory, dirs, files in os.walk(path):
                base = Path(directory)
                dirs[:] = sorted(
                    d
                    for d in dirs
                    if not d.startswith(".")
                    and d not in _SKIPPED_DIRS
                    and not config.excluded(base / d)
                )
                for name in sorted(files):
                    if name.endswith(".py") and not config.excluded(base / name):
                        yield from once(base / name)
        elif path.exists():  # a file, or a FIFO or device named: read_source says which
            yield from once(path)
        else:
            raise FileNotFoundError(f"{str(raw)!r}: no such file or directory")


def lint_paths(
    paths: Sequence[str | os.PathLike[str]], *, config: LintConfig | None = None
) -> LintReport:
    """Lint the files and directories ``paths``.  ``config`` defaults to the nearest
    ``pyproject.toml``'s ``[tool.prism.lint]`` (:func:`load_config`).  A file that cannot be
    read or parsed is a problem of the report; a path that does not exist raises
    ``FileNotFoundError`` before anything is linted."""
    config = config if config is not None else load_config(paths)
    files = list(iter_python_files(paths, config))
    findings: list[Finding] = []
    problems: list[Problem] = []
    lines = 0
    for path in files:
        try:
            source, _ = read_source(path)
            findings.extend(lint_source(source, path, config=config))
        except (OSError, SyntaxError, UnicodeDecodeError, ValueError, RecursionError) as exc:
            problems.append(problem_for(path, exc))
            continue
        lines += source.count("\n") + 1
    return LintReport(tuple(sorted(findings)), tuple(sorted(problems)), len(files), lines)
