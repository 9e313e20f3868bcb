"""The lint's configuration: ``[tool.prism.lint]`` in the nearest ``pyproject.toml``.

The keys are ``select``, ``ignore``, ``allowed-modules``, ``array-types``, ``exclude`` and the
table ``per-file-ignores``.  The file is the first ``pyproject.toml`` with the table, found from
the linted paths' common directory upwards (``--config FILE`` names one).  Unknown keys,
unknown codes and values of the wrong type are errors naming the file, the key, what was given
and what is accepted.  TOML is read with :mod:`tomllib`, or ``tomli`` on Python 3.10.  Each key,
with an example: docs/lint.md, "Configuration".
"""

from __future__ import annotations

import fnmatch
import importlib
import os
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from prism_core.kernel.errors import PrismError, did_you_mean
from prism_core.lint.codes import CODES

__all__ = ["LintConfig", "LintConfigError", "find_config", "load_config", "parse_codes"]

_ALL_CODES = frozenset(c.code for c in CODES)
_DOTTED = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*\Z")
_KEYS = ("select", "ignore", "allowed-modules", "array-types", "exclude", "per-file-ignores")


class LintConfigError(PrismError, ValueError):
    """The lint's configuration (``[tool.prism.lint]``, ``--select``, ``--ignore``) is wrong;
    the message names the file or option, the key, what was given and what is accepted."""

    __module__ = "prism_core.lint"


def parse_codes(values: Iterable[object], where: str) -> frozenset[str]:
    """The codes ``values`` name: each a code (``PRISM004``) or a prefix of codes (``PRISM``,
    ``PRISM00``), case-insensitive.  ``where`` names the key or option in the error."""
    codes: set[str] = set()
    for value in values:
        if not isinstance(value, str):
            raise LintConfigError(
                f"{where}: {value!r} is not a code; give codes such as 'PRISM004' (strings)"
            )
        text = value.strip().upper()
        matched = {c for c in _ALL_CODES if text and c.startswith(text)}
        if not matched:
            raise LintConfigError(
                f"{where}: {value!r} is not a code or a prefix of codes"
                f"{did_you_mean(text, sorted(_ALL_CODES))}; the codes are "
                f"{', '.join(sorted(_ALL_CODES))} (`prism lint --list-codes`)"
            )
        codes |= matched
    return frozenset(codes)


@dataclass(frozen=True)
class LintConfig:
    """What to report: the codes in force (``select`` minus ``ignore``, per file minus its
    ``per-file-ignores``), the framework modules allowed, the annotations that mark arrays, the
    paths excluded, and where the patterns are relative to (``root``) and the file it came from
    (``source``, ``None`` for the defaults)."""

    select: frozenset[str] = _ALL_CODES
    ignore: frozenset[str] = frozenset()
    allowed_modules: tuple[str, ...] = ()
    array_types: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, frozenset[str]], ...] = ()
    root: Path = field(default_factory=Path.cwd)
    source: Path | None = None

    __module__ = "prism_core.lint"

    @classmethod
    def from_table(
        cls, table: Mapping[str, Any], *, source: Path | None = None, root: Path | None = None
    ) -> LintConfig:
        """A configuration from a ``[tool.prism.lint]`` table (keys as in the TOML file)."""
        where = f"{source}: [tool.prism.lint]" if source else "[tool.prism.lint]"
        if not isinstance(table, Mapping):
            raise LintConfigError(f"{where} must be a table, not {type(table).__name__}")
        for key in table:
            if key not in _KEYS:
                raise LintConfigError(
                    f"{where}: unknown key {key!r}{did_you_mean(str(key), _KEYS)}; the keys are "
                    f"{', '.join(_KEYS)}"
                )

        def strings(key: str) -> list[str]:
            value = table.get(key, [])
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise LintConfigError(f"{where}: {key} must be a list of strings, not {value!r}")
            return value

        def dotted(key: str) -> tuple[str, ...]:
            names = strings(key)
            for name in names:
                if not _DOTTED.match(name):
                    raise LintConfigError(
                        f"{where}: {key}: {name!r} is not a dotted module path (such as "
                        "'numpy.typing')"
                    )
            return tuple(names)

        select = parse_codes(strings("select"), f"{where}: select") if "select" in table else None
        per_file = table.get("per-file-ignores", {})
        if not isinstance(per_file, Mapping):
            raise LintConfigError(
                f"{where}: per-file-ignores must be a table of glob = [codes], not {per_file!r}"
            )
        pairs = []
        for pattern, codes in per_file.items():
            if not isinstance(codes, list):
                raise LintConfigError(
                    f"{where}: per-file-ignores.{pattern!r} must be a list of codes, not {codes!r}"
                )
            pairs.append((pattern, parse_codes(codes, f"{where}: per-file-ignores.{pattern!r}")))
        return cls(
            select=_ALL_CODES if select is None else select,
            ignore=parse_codes(strings("ignore"), f"{where}: ignore"),
            allowed_modules=dotted("allowed-modules"),
            array_types=dotted("array-types"),
            exclude=tuple(strings("exclude")),
            per_file_ignores=tuple(pairs),
            root=root if root is not None else Path.cwd(),
            source=source,
        )

    def with_options(
        self, *, select: Iterable[str] | None = None, ignore: Iterable[str] = ()
    ) -> LintConfig:
        """This configuration with the command line's ``--select`` (replacing ``select``) and
        ``--ignore`` (added to ``ignore``)."""
        return replace(
            self,
            select=self.select if select is None else parse_codes(select, "--select"),
            ignore=self.ignore | parse_codes(ignore, "--ignore"),
        )

    def codes_for(self, path: str | os.PathLike[str] | None) -> frozenset[str]:
        """The codes in force for the file at ``path`` (``None``: a string with no file)."""
        codes = self.select - self.ignore
        if path is not None:
            for pattern, ignored in self.per_file_ignores:
                if self._matches(path, pattern):
                    codes -= ignored
        return codes

    def allows(self, module: str) -> bool:
        """Whether the dotted name ``module`` (``numpy.typing.NDArray``) is inside one of the
        ``allowed-modules``."""
        return any(module == m or module.startswith(m + ".") for m in self.allowed_modules)

    def excluded(self, path: str | os.PathLike[str]) -> bool:
        """Whether walking a directory skips ``path`` (a file or a directory)."""
        return any(self._matches(path, pattern) for pattern in self.exclude)

    def _matches(self, path: str | os.PathLike[str], pattern: str) -> bool:
        # A pattern with a slash matches the path relative to the configuration's directory
        # (fnmatch: `*` crosses slashes, as flake8's per-file-ignores); one without matches the
        # file or directory name, wherever it is.
        p = Path(path)
        if "/" not in pattern:
            return fnmatch.fnmatchcase(p.name, pattern)
        try:
            rel = p.resolve().relative_to(self.root.resolve()).as_posix()
        except ValueError:
            rel = p.as_posix()
        return fnmatch.fnmatchcase(rel, pattern.strip("/")) or fnmatch.fnmatchcase(
            rel, pattern.strip("/") + "/*"
        )


def _toml(text: str, source: Path) -> dict[str, Any]:
    try:
        toml: Any = importlib.import_module("tomllib")
    except ModuleNotFoundError:
        try:
            toml = importlib.import_module("tomli")  # tomllib's origin, for Python 3.10
        except ModuleNotFoundError:
            raise LintConfigError(
                f"{source}: reading its [tool.prism.lint] on Python "
                f"{sys.version_info.major}.{sys.version_info.minor} needs the tomli package "
                "(pip install tomli); Python 3.11 and later read TOML themselves"
            ) from None
    try:
        data: dict[str, Any] = toml.loads(text)
    except toml.TOMLDecodeError as exc:
        raise LintConfigError(f"{source}: not valid TOML: {exc}") from None
    return data


def _lint_table(path: Path) -> Mapping[str, Any] | None:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise LintConfigError(f"{path}: cannot be read: {exc}") from None
    if "prism" not in text:  # most projects: no TOML parser needed, none imported
        return None
    tool = _toml(text, path).get("tool", {})
    prism = tool.get("prism", {}) if isinstance(tool, Mapping) else {}
    table: Mapping[str, Any] | None = prism.get("lint") if isinstance(prism, Mapping) else None
    return table


def find_config(start: str | os.PathLike[str]) -> Path | None:
    """The first ``pyproject.toml`` with a ``[tool.prism.lint]`` table in ``start`` (a
    directory, or a file's directory) or above it; ``None`` when there is none."""
    here = Path(start).resolve()
    if not here.is_dir():
        here = here.parent
    for directory in (here, *here.parents):
        candidate = directory / "pyproject.toml"
        if candidate.is_file() and _lint_table(candidate) is not None:
            return candidate
    return None


def load_config(
    paths: Sequence[str | os.PathLike[str]] = (),
    *,
    config_file: str | os.PathLike[str] | None = None,
) -> LintConfig:
    """The configuration for linting ``paths``: from ``config_file`` when given (a
    ``pyproject.toml``; a file without ``[tool.prism.lint]`` gives the defaults, relative to
    its directory), else from :func:`find_config` of the paths' common directory (the working
    directory when there are none), else the defaults."""
    source: Path | None
    if config_file is not None:
        source = Path(config_file)
        if not source.is_file():
            raise LintConfigError(f"--config: {str(config_file)!r} is not a file")
    else:
        absolute = [os.path.abspath(p) for p in paths] or [os.getcwd()]
        try:
            common = os.path.commonpath(absolute)
        except ValueError:  # paths on different drives (Windows)
            common = os.getcwd()
        source = find_config(common)
    if source is None:
        return LintConfig()
    table = _lint_table(source)
    return LintConfig.from_table(table or {}, source=source, root=source.resolve().parent)
