"""The ``prism`` commands plugins add, through the ``prism.commands`` entry points."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any, TextIO

from prism_core._cli.common import EXIT_PROBLEMS, Parser
from prism_core.kernel.errors import describe_exception

#: The entry-point group of the commands plugins add to ``prism``: name -> "module:function",
#: the function called with ``prism``'s subcommands (docs/writing-a-plugin.md, "Adding a
#: `prism` command").
COMMAND_GROUP = "prism.commands"
#: The namespace attribute naming the plugin a command came from (for its internal errors).
SOURCE = "prism_command_source"
#: The namespace attribute of a command that takes any arguments (a broken one's stand-in).
ANY_ARGUMENTS = "prism_any_arguments"


def command_word(argv: Sequence[str]) -> str | None:
    """The command ``argv`` names (its first word that is not an option), if any."""
    return next((word for word in argv if not word.startswith("-")), None)


def add_plugin_commands(sub: Any) -> None:
    """Add the commands of the ``prism.commands`` entry points to ``sub`` (``prism``'s
    subcommands), in name order.

    Each entry point names a function ``add(subparsers) -> None`` that adds the subcommand of
    the entry point's name, with its handler as the default ``func`` (``func(args, out, err) ->
    int``, the exit status).  An entry point that fails to load, raises, or adds no such command
    is replaced by a command of its name that says why in one line (exit 1), naming the
    distribution and the entry point: the other commands never see it.  One named like a
    builtin command, or like a command added before it, is not added.
    """
    from prism_core.kernel.distributions import entry_points

    for ep in sorted(entry_points(COMMAND_GROUP), key=lambda ep: (ep.name, ep.value)):
        name = ep.name
        if name in sub.choices:
            continue
        dist = getattr(ep, "dist", None)
        label = (
            f"{dist.name} {dist.version}" if dist is not None else "an unknown distribution"
        ) + f" (entry point '{name} = {ep.value}' in '{COMMAND_GROUP}')"
        try:
            add = ep.load()
            if not callable(add):
                raise TypeError(f"{ep.value} is a {type(add).__name__}, not a function")
            add(sub)
            parser = sub.choices.get(name)
            if parser is None:
                raise LookupError(f"it added no command named {name!r}")
            if not callable(parser.get_default("func")):
                raise LookupError(
                    f"its command {name!r} has no handler: set_defaults(func=...) on its parser"
                )
        except Exception as exc:  # a broken plugin never breaks the other commands
            _broken_command(sub, name, f"{label} failed: {describe_exception(exc)}")
            continue
        parser.set_defaults(**{SOURCE: label})


def _broken_command(sub: Any, name: str, why: str) -> None:
    """Make ``prism NAME`` say ``why`` (exit 1), whatever its arguments."""
    message = " ".join(why.split())  # one line

    def fail(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
        err.write(f"prism {name}: error: {message}\n")
        return EXIT_PROBLEMS

    parser = Parser(prog=f"prism {name}", add_help=False)
    if name in sub.choices:  # added before it failed: replaced
        sub.choices[name] = parser
    else:
        parser = sub.add_parser(name, help=f"(broken) {message}", add_help=False)
    parser.add_argument("rest", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    parser.set_defaults(func=fail, **{ANY_ARGUMENTS: True})
