"""``prism lint``: the backend-purity lint (``prism_core.lint``) as a ``prism`` command."""

from __future__ import annotations

import argparse
from typing import Any, TextIO

from prism_core._cli.common import UsageError


def cmd_lint(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from prism_core.lint.cli import run
    from prism_core.lint.config import LintConfigError

    try:
        return run(args, out, err)
    except (LintConfigError, FileNotFoundError) as exc:
        raise UsageError(str(exc)) from None


def add_lint(sub: Any) -> None:
    """``prism lint``: its parser, added to ``prism``'s subcommands ``sub``."""
    from prism_core.lint.cli import add_arguments as add_lint_arguments

    p = sub.add_parser(
        "lint",
        help="check Python code against the backend-purity guidelines (docs/lint.md)",
        description="Read Python files (never run them) and report, as FILE:LINE:COL: CODE "
        "message, what backend-agnostic code should not do: framework imports and calls, "
        "conversions out of the backend, Python operators on Prism arrays, framework dtypes, "
        "devices, random numbers and type checks. Configured by [tool.prism.lint] in the "
        "nearest pyproject.toml; `# noqa: PRISM004` silences a line. Exit 0 when nothing is "
        "found, 1 on findings, 2 on usage errors or files that do not parse.",
    )
    add_lint_arguments(p)
    p.set_defaults(func=cmd_lint)
