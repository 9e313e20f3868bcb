"""Two helpers of the plugin's messages: the close matches of a mistyped word, and a path as a
user should see it.  (prism_core has its own, private; these are small enough to keep here.)"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable
from pathlib import Path

__all__ = ["did_you_mean", "display_path"]


def did_you_mean(word: str, candidates: Iterable[str]) -> str:
    """``" (did you mean 'x'?)"`` for the closest candidates, or ``""``."""
    import difflib  # only when something is wrong

    close = difflib.get_close_matches(word, list(candidates), n=3, cutoff=0.6)
    if not close:
        return ""
    return " (did you mean " + " or ".join(repr(c) for c in close) + "?)"


def display_path(path: str | os.PathLike[str]) -> str:
    """``path`` relative to the working directory when it lies below it, else as given."""
    p = Path(path)
    try:
        # The directory is resolved, the name is kept: a symbolic link is named as itself (not
        # as its target, which may not exist or may loop back to the link).
        return str((p.parent.resolve() / p.name).relative_to(_resolved_cwd(os.getcwd())))
    except (ValueError, OSError, RuntimeError):  # RuntimeError: a link loop (Python < 3.13)
        return str(p)


@functools.lru_cache(maxsize=4)
def _resolved_cwd(cwd: str) -> Path:
    # Resolved once per directory: a report names many files.
    return Path(cwd).resolve()
