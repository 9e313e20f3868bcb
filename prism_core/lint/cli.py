"""The command line of the lint: ``prism lint`` and ``python -m prism_core.lint``.

Both take the same arguments (:func:`add_arguments`) and run :func:`run`; ``prism`` adds its
own error handling around it, and :func:`main` is the same for ``python -m``.  Findings go to
standard output, one per line as ``FILE:LINE:COL: CODE message`` sorted by file, line, column
and code (``--json``: a list of objects); files that cannot be parsed and the summary go to
standard error.  Exit status: 0 nothing found, 1 findings, 2 a usage or configuration error or
a file that could not be linted (the other files are linted all the same), 3 a bug.

Importing this module imports only :mod:`argparse`: ``prism`` builds its parser from it on
every start.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import TextIO

from prism_core.kernel.errors import describe_exception

__all__ = ["add_arguments", "main", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the lint's arguments to ``parser``."""
    parser.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="Python files, or directories to lint every *.py file under",
    )
    parser.add_argument(
        "--select",
        metavar="CODES",
        help="comma-separated codes or prefixes to report, instead of the configuration's "
        "select (default: all)",
    )
    parser.add_argument(
        "--ignore",
        metavar="CODES",
        help="comma-separated codes or prefixes not to report, added to the configuration's",
    )
    parser.add_argument(
        "--fix",
        action="store_true",
        help="rewrite Python operators on Prism arrays as Prism ops (PRISM004) and "
        "framework dtypes given to Prism ops (PRISM005) in place, then report what is left",
    )
    parser.add_argument("--json", action="store_true", help="print the findings as JSON")
    parser.add_argument(
        "--config",
        metavar="FILE",
        help="the pyproject.toml to read [tool.prism.lint] from (default: the nearest one "
        "above the paths that has that table)",
    )
    parser.add_argument(
        "--list-codes", action="store_true", help="list the codes with what each finds, and exit"
    )


def _codes(text: str | None) -> list[str] | None:
    if text is None:
        return None
    return [part for part in text.replace(" ", ",").split(",") if part]


def _list_codes(as_json: bool, out: TextIO) -> int:
    from prism_core.lint.codes import CODES

    if as_json:
        rows = [{"code": c.code, "name": c.name, "summary": c.summary, "fix": c.fix} for c in CODES]
        json.dump(rows, out, indent=2)
        out.write("\n")
        return 0
    width = max(len(c.name) for c in CODES)
    for c in CODES:
        fixable = "fix" if c.fixable else "   "
        out.write(f"{c.code}  {c.name.ljust(width)}  {fixable}  {c.summary.replace('`', '')}\n")
    return 0


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Run the lint as the command line asked; the exit status.  Raises
    :class:`prism_core.lint.LintConfigError` for a wrong command line or configuration and
    ``FileNotFoundError`` for a path that does not exist (exit status 2 for both)."""
    from prism_core.kernel.errors import display_path
    from prism_core.lint.config import LintConfigError, load_config
    from prism_core.lint.runner import lint_paths

    if args.list_codes:
        return _list_codes(args.json, out)
    if not args.paths:
        raise LintConfigError(
            "give at least one PATH (a Python file, or a directory to lint the *.py files "
            "under), e.g. prism lint src/"
        )
    config = load_config(args.paths, config_file=args.config).with_options(
        select=_codes(args.select), ignore=_codes(args.ignore) or ()
    )
    fixed_problems = []
    if args.fix:
        from prism_core.lint.fix import fix_paths

        summary = fix_paths(args.paths, config=config)
        fixed_problems = list(summary.problems)
        n, files = summary.fixes, len(summary.files_changed)
        err.write(
            f"prism lint: fixed {n} finding{'s' if n != 1 else ''} in {files} "
            f"file{'s' if files != 1 else ''}\n"
        )
    report = lint_paths(args.paths, config=config)
    if args.json:
        json.dump([f.as_dict() for f in report.findings], out, indent=2)
        out.write("\n")
    else:
        for finding in report.findings:
            out.write(f"{finding}\n")
    problems = sorted({*report.problems, *fixed_problems})
    for problem in problems:
        err.write(f"{problem}\n")
    found = len(report.findings)
    fixable = sum(f.fixable for f in report.findings)
    parts = [
        f"{found} finding{'s' if found != 1 else ''}"
        + (f" ({fixable} fixable with --fix)" if fixable and not args.fix else ""),
        f"{report.files} file{'s' if report.files != 1 else ''} checked",
    ]
    if problems:
        parts.append(f"{len(problems)} could not be linted")
    source = f"; configuration: {display_path(config.source)}" if config.source else ""
    err.write(f"prism lint: {', '.join(parts)}{source}\n")
    if problems:
        return 2
    return 1 if report.findings else 0


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m prism_core.lint``: the same as ``prism lint``, with the same exit status."""
    from prism_core.kernel.config import debug_enabled

    parser = argparse.ArgumentParser(
        prog="python -m prism_core.lint",
        description="Check Python code against Prism's backend-purity guidelines (docs/lint.md).",
        epilog="Exit status: 0 nothing found, 1 findings, 2 usage error or a file that could "
        "not be linted, 3 internal error.",
    )
    add_arguments(parser)
    args = parser.parse_args(argv)
    from prism_core.lint.config import LintConfigError

    try:
        return run(args, sys.stdout, sys.stderr)
    except (LintConfigError, FileNotFoundError) as exc:
        sys.stderr.write(f"{parser.prog}: error: {exc}\n")
        return 2
    except KeyboardInterrupt:
        sys.stderr.write(f"{parser.prog}: interrupted\n")
        return 130
    except Exception as exc:
        if debug_enabled():
            raise
        sys.stderr.write(
            f"{parser.prog}: internal error: {describe_exception(exc)}\n"
            "This is a bug in Prism. Run again with PRISM_DEBUG=1 for the traceback, and "
            "please report it.\n"
        )
        return 3
