"""Stand-in vendor tools: small shell scripts put on ``PATH`` in place of ``amd-smi``,
``xpu-smi``, ``sysctl``, ``npu-smi`` and the like, so that detection runs its real code path (a
real subprocess, its timeout, its exit status) on recorded output on any POSIX host.

A stand-in answers only the exact argument strings it is given (``case "$*"``), each with a
shell body (print a sample, sleep, fail); any other arguments fail as an unknown option does
(exit status 2), so a detection module that asks with other arguments than the recorded ones
finds nothing instead of the sample.  Used by tests/test_detect_*.py and by
docs/gen_detection_samples.py, so it imports nothing of pytest.
"""

from __future__ import annotations

import shlex
import shutil
import stat
from collections.abc import Mapping
from pathlib import Path

__all__ = ["CAT", "SLEEP", "UNKNOWN_OPTION", "printing", "prints", "stand_in"]

#: Absolute paths, since the stand-ins run with nothing but their own directory on ``PATH``.
CAT = shutil.which("cat") or "/bin/cat"
SLEEP = shutil.which("sleep") or "/bin/sleep"

#: What a stand-in does with arguments it has no answer for: what a tool does with an unknown
#: option.
UNKNOWN_OPTION = 'echo "unexpected arguments: $*" >&2; exit 2'


def prints(sample: Path) -> str:
    """The shell body that prints the file ``sample`` (and exits with cat's status)."""
    return f"exec {shlex.quote(CAT)} {shlex.quote(str(sample))}"


def stand_in(
    directory: Path,
    tool: str,
    answers: Mapping[tuple[str, ...], str] | None = None,
    otherwise: str = UNKNOWN_OPTION,
) -> Path:
    """Write the executable ``directory/tool`` and return ``directory`` (made if missing).

    ``answers`` maps a whole command, the tool's name first (``("npu-smi", "info")``, as the
    detection modules spell their commands), to the shell body run when the stand-in is called
    with exactly that command's arguments; ``otherwise`` runs for any other arguments.
    """
    lines = ["#!/bin/sh", 'case "$*" in']
    for command, body in (answers or {}).items():
        if not command or command[0] != tool:
            raise ValueError(
                f"the stand-in {tool!r} was given an answer for the command {command!r}; "
                f"each command must begin with {tool!r}"
            )
        lines += [f"  {shlex.quote(' '.join(command[1:]))})", body, "  ;;"]
    lines += ["  *)", otherwise, "  ;;", "esac"]
    directory.mkdir(parents=True, exist_ok=True)
    script = directory / tool
    script.write_text("\n".join(lines) + "\n", encoding="utf-8")
    script.chmod(script.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return directory


def printing(directory: Path, samples: Mapping[tuple[str, ...], Path]) -> Path:
    """Stand-ins in ``directory`` that print each sample file for its command (the tool's name
    first); the commands of one tool make one stand-in.  Returns ``directory``."""
    tools: dict[str, dict[tuple[str, ...], str]] = {}
    for command, sample in samples.items():
        tools.setdefault(command[0], {})[command] = prints(sample)
    for tool, answers in tools.items():
        stand_in(directory, tool, answers)
    directory.mkdir(parents=True, exist_ok=True)
    return directory
