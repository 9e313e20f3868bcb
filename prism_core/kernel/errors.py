"""Prism's error tree and the located problem record used by every loader and validator."""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from prism_core.kernel.public import home

__all__ = [
    "DeviceFileError",
    "PrismError",
    "PrismWarning",
    "Problem",
    "RequirementError",
    "UnknownDeviceError",
    "debug",
    "did_you_mean",
]


@home("prism_core.hardware")
@dataclass(frozen=True, order=True)
class Problem:
    """One thing wrong with one input, located as precisely as it can be: ``line`` and
    ``column`` are 1-based, ``json_path`` is the path of the key at fault in the document
    (``$.features[0].version``), ``"$"`` for the document itself."""

    file: str
    line: int = 0
    column: int = 0
    json_path: str = "$"
    message: str = ""

    def __str__(self) -> str:
        where = self.file or "<input>"
        if self.line:
            where = f"{where}:{self.line}:{self.column}"
        if self.json_path and self.json_path != "$":
            return f"{where}: {self.json_path}: {self.message}"
        return f"{where}: {self.message}"

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


class PrismError(Exception):
    """Base class of every error Prism raises on purpose."""

    __module__ = "prism_core"


class PrismWarning(UserWarning):
    """Base class of Prism's warnings (skipped files, fallbacks)."""

    __module__ = "prism_core"


@home("prism_core.hardware")
class DeviceFileError(PrismError, ValueError):
    """One or more device files are invalid.  ``problems`` lists every problem, sorted."""

    def __init__(self, problems: Iterable[Problem]) -> None:
        self.problems: tuple[Problem, ...] = tuple(sorted(problems))
        n = len(self.problems)
        head = f"{n} problem{'s' if n != 1 else ''} in device files:"
        super().__init__("\n".join([head, *(f"  {p}" for p in self.problems)]))


@home("prism_core.hardware")
class UnknownDeviceError(PrismError, LookupError):
    """A device type was asked for that no loaded description defines."""

    def __init__(self, device_type: str, known: Sequence[str], accepted: str = "") -> None:
        self.device_type = device_type
        self.known = tuple(known)
        hint = did_you_mean(device_type, self.known)
        msg = (
            f"unknown device type {device_type!r}{hint}; `prism devices --all` lists the known ones"
        )
        super().__init__(msg + (f"; {accepted}" if accepted else ""))

    def __str__(self) -> str:  # LookupError would quote the message
        return str(self.args[0])


@home("prism_core.hardware")
class RequirementError(PrismError, ValueError):
    """A requirement mapping is malformed (not merely unmet)."""


def debug(message: str, *args: object) -> None:
    """``logging.getLogger("prism_core").debug(message, *args)``, without importing
    :mod:`logging` (2 ms of the first call) where nothing has: then no handler is configured,
    and the record would go nowhere."""
    logging = sys.modules.get("logging")
    if logging is not None:
        logging.getLogger("prism_core").debug(message, *args)


def user_stacklevel() -> int:
    """The ``stacklevel`` for ``warnings.warn(..., stacklevel=user_stacklevel())`` that points
    at the user's line: the first frame outside Prism, the import system, pluggy and
    ``contextlib`` (Prism's context managers entered by the user's ``with``)."""
    frame = sys._getframe(1)  # the caller of this function: the frame calling warnings.warn
    level = 1
    while frame is not None:
        name = frame.f_globals.get("__name__", "")
        if not (
            name == "prism_core"
            or name == "contextlib"
            or name.startswith(("prism_core.", "importlib", "pluggy"))
            or frame.f_code.co_filename.startswith("<frozen importlib")
        ):
            return level
        frame = frame.f_back  # type: ignore[assignment]
        level += 1
    return 1


def describe_exception(exc: BaseException) -> str:
    """``"TypeName: message"`` for an error report.  An exception whose ``__str__`` raises (a
    user's class can) is described all the same, and the exception itself is left alone: a
    report must never replace the caller's exception with its own."""
    try:
        text = str(exc)
    except Exception as inner:
        text = f"(its message cannot be shown: str() raised {type(inner).__name__})"
    return f"{type(exc).__name__}: {text}"


def did_you_mean(word: str, candidates: Iterable[str], *, n: int = 3) -> str:
    """``" (did you mean 'x'?)"`` for the closest candidate, ``" (did you mean 'x' or 'y'?)"``
    for up to ``n`` close ones (closest first), or ``""``."""
    import difflib  # only when something is wrong: 2 ms of the first call otherwise

    close = difflib.get_close_matches(word, list(candidates), n=n, cutoff=0.6)
    if not close:
        return ""
    return " (did you mean " + " or ".join(repr(c) for c in close) + "?)"


def display_path(path: str | Path) -> str:
    """A path as a user should see it: relative to the working directory when that is shorter."""
    p = Path(path)
    try:
        # The directory is resolved, the name is kept: a symbolic link is named as itself (not
        # as its target, which may not exist or may loop back to the link).
        rel = (p.parent.resolve() / p.name).relative_to(_resolved_cwd(os.getcwd()))
    except (ValueError, OSError, RuntimeError):  # RuntimeError: a link loop (Python < 3.13)
        return str(p)
    return str(rel)


@functools.lru_cache(maxsize=4)
def _resolved_cwd(cwd: str) -> Path:
    # Resolving the working directory once per directory: reports call this for every file.
    return Path(cwd).resolve()
