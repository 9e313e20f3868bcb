"""The ``prism`` command line.

Exit status: 0 success; 1 something was found wrong (an invalid device file, a library
problem, tuned choices that could not be stored, a tuning cache that could not be cleared, a
figure of ``prism bench --plot`` that could not be written once measured); 2 the command line
was wrong (unknown option, missing path, unknown device); 3 an internal error
(a bug in Prism: set ``PRISM_DEBUG=1`` for its traceback and report it); 130 interrupted
(Ctrl-C).  No traceback reaches the user otherwise.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from collections.abc import Sequence
from typing import Any, TextIO

from prism_core._cli import devices, explain, installation, lint, tuning
from prism_core._cli.common import EXIT_INTERNAL, EXIT_PROBLEMS, EXIT_USAGE, Parser, UsageError
from prism_core._cli.plugin_commands import ANY_ARGUMENTS, SOURCE, add_plugin_commands, command_word
from prism_core.kernel.config import debug_enabled
from prism_core.kernel.errors import PrismError, describe_exception
from prism_core.kernel.version import __version__

__all__ = ["main"]

#: When this module was imported, on ``time.perf_counter()``'s clock: the start of the command
#: when ``prism`` runs as a program (Python's own start-up comes before), from which
#: ``--budget`` counts.  A call of ``main(argv)`` from Python counts from that call instead.
_IMPORTED = time.perf_counter()


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """``prism``'s parser.  The commands of plugins are added unless ``argv`` (the command
    line, without the program) names a builtin command: reading their entry points costs a
    builtin command nothing then."""
    parser = Parser(
        prog="prism",
        description="Prism: hardware descriptions, backends and dispatch for scientific Python.",
        epilog="Exit status: 0 ok, 1 problems found, 2 usage error, 3 internal error. "
        "Environment: PRISM_HARDWARE_PATH (extra device-file directories), PRISM_CACHE_DIR, "
        "PRISM_NO_CACHE=1, PRISM_DEBUG=1. Docs: docs/device-files.md.",
    )
    parser.add_argument("--version", action="version", version=f"prism {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    sub.required = True

    for add in (
        devices.add_validate,
        devices.add_devices,
        devices.add_show,
        installation.add_plugins,
        installation.add_doctor,
        explain.add_explain,
        tuning.add_tune,
        tuning.add_bench,
        devices.add_schema,
        lint.add_lint,
    ):
        add(sub)
    if argv is None or command_word(argv) not in sub.choices:
        add_plugin_commands(sub)
    return parser


def _show_warning(err: TextIO) -> Any:
    def show(message: Warning | str, category: type[Warning], *args: Any, **kwargs: Any) -> None:
        err.write(f"prism: warning: {message}\n")

    return show


def main(argv: Sequence[str] | None = None) -> int:
    from prism_core.kernel.plugins import PluginWarning

    # Run as the program (no argv): the command started when Python imported this module.
    started = _IMPORTED if argv is None else time.perf_counter()
    words = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(words)
    args, unknown = parser.parse_known_args(words)
    if unknown and not getattr(args, ANY_ARGUMENTS, False):
        parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    args.started = started
    out, err = sys.stdout, sys.stderr
    try:
        with warnings.catch_warnings():
            # Prism's warnings (a plugin skipped, a fallback) are for the user, not a traceback
            # location inside Prism: one line each, in the CLI's own format.
            warnings.showwarning = _show_warning(err)
            # A plugin that failed is reported by `prism plugins` and `prism doctor`; the other
            # commands keep their output clean of it (a warning is for Python callers).
            warnings.filterwarnings("ignore", category=PluginWarning)
            return int(args.func(args, out, err))
    except UsageError as exc:
        err.write(f"prism {args.command}: error: {exc}\n")
        return EXIT_USAGE
    except PrismError as exc:
        err.write(f"prism {args.command}: error: {exc}\n")
        return EXIT_PROBLEMS
    except BrokenPipeError:
        # The reader went away (`prism devices | head`): stop quietly, as other tools do.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_PROBLEMS
    except KeyboardInterrupt:
        err.write("prism: interrupted\n")
        return 130
    except Exception as exc:
        if debug_enabled():
            raise
        source = getattr(args, SOURCE, None)
        err.write(
            f"prism {args.command}: internal error: {describe_exception(exc)}\n"
            f"This is a bug in {source or 'Prism'}. Run again with PRISM_DEBUG=1 for the "
            "traceback, and please report it.\n"
        )
        return EXIT_INTERNAL
