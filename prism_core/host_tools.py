"""Running a vendor's command-line tool to ask what accelerators a host has, for plugins'
detection hooks (``nvidia-smi``, ``amd-smi``, ``xpu-smi``, ``npu-smi``, …).

Every detection module asks on a process's first call, so this module imports ``subprocess``
only to run a tool, and looks the tool up on ``PATH`` itself (:func:`which`: ``shutil`` costs
about 3 ms).  Every run has a timeout, and a tool that is missing, hangs, fails or cannot be
started is a sentence, never an exception.  A tool's answer is reused for :data:`REUSE_S`
seconds: several plugins ask one tool in one detection (the torch, CuPy and Numba plugins all
ask ``nvidia-smi``), and a tool takes from 50 ms to seconds to answer, or its whole timeout
where it hangs.  docs/architecture.md, "Host detection".
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Sequence

__all__ = ["REUSE_S", "TOOL_TIMEOUT_S", "run_tool", "which"]

#: How long a tool may take to answer, in seconds.
TOOL_TIMEOUT_S = 10
#: How long an answer is reused, in seconds: for the same executable file (path, inode, size,
#: modification time), arguments and environment.
REUSE_S = 5.0
_answers: dict[tuple[object, ...], tuple[float, tuple[str | None, str]]] = {}
_answers_lock = threading.Lock()


def which(command: str) -> str | None:
    """The path of ``command`` on ``PATH``, as :func:`shutil.which` gives it.

    On POSIX the search is written out, as ``shutil.which`` makes it: ``PATH`` (unset: the
    system's ``CS_PATH``, else :data:`os.defpath`; empty: nothing found), each directory once,
    an empty entry meaning the current directory; the first entry that is executable
    (``os.access`` with ``X_OK``) and not a directory.  Elsewhere (Windows: ``PATHEXT``, the
    current directory first) ``shutil.which`` itself is asked.
    """
    if os.name != "posix" or os.path.dirname(command):
        import shutil

        return shutil.which(command)
    path = os.environ.get("PATH")
    if path is None:
        try:
            path = os.confstr("CS_PATH")
        except (AttributeError, ValueError):
            path = os.defpath
    if not path:
        return None
    seen: set[str] = set()
    for directory in path.split(os.pathsep):
        if directory in seen:
            continue
        seen.add(directory)
        candidate = os.path.join(directory, command)
        if os.access(candidate, os.X_OK) and not os.path.isdir(candidate):
            return candidate
    return None


def run_tool(
    executable: str, arguments: Sequence[str], *, name: str, timeout: float = TOOL_TIMEOUT_S
) -> tuple[str | None, str]:
    """Run ``executable`` with ``arguments``: (its standard output, "") or (None, why it
    failed), the reason naming the tool as ``name`` (``"amd-smi"``); the answer of the same
    run within :data:`REUSE_S` seconds where there is one (module docstring)."""
    try:
        st = os.stat(executable)
        key: tuple[object, ...] | None = (
            executable, st.st_ino, st.st_size, st.st_mtime_ns, tuple(arguments), timeout,
            hash(frozenset(os.environ.items())),
        )  # fmt: skip
    except (OSError, TypeError, ValueError):
        key = None
    now = time.monotonic()
    with _answers_lock:
        found = _answers.get(key) if key is not None else None
    if found is not None and now - found[0] < REUSE_S:
        return found[1]
    answer = _run(executable, arguments, name, timeout)
    if key is not None:
        with _answers_lock:
            now = time.monotonic()
            for old in [k for k, (at, _) in _answers.items() if now - at >= REUSE_S]:
                del _answers[old]
            _answers[key] = (now, answer)
    return answer


def _run(
    executable: str, arguments: Sequence[str], name: str, timeout: float
) -> tuple[str | None, str]:
    import subprocess  # only where there is a tool to run (the first call)

    try:
        proc = subprocess.run(
            [executable, *arguments],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        return None, f"{name} did not answer within {timeout:g} s"
    except (OSError, ValueError) as exc:
        return None, f"{name} could not be run: {exc}"
    if proc.returncode != 0:
        said = (proc.stdout.strip() or proc.stderr.strip()).splitlines()
        detail = f": {said[0].strip()}" if said else ""
        return None, f"{name} failed with exit status {proc.returncode}{detail}"
    return proc.stdout, ""
