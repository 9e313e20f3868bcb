"""What ``prism``'s commands share: exit statuses, usage errors, and output as JSON or a table."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any, NoReturn, TextIO

EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3


class UsageError(Exception):
    """The command line asked for something that cannot be (exit status 2)."""


class Parser(argparse.ArgumentParser):
    """``prism``'s parsers: a usage error prints the usage and exits with status 2."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def dump_json(data: Any, out: TextIO) -> None:
    json.dump(data, out, indent=2, sort_keys=False)
    out.write("\n")


def table(rows: Sequence[Sequence[str]], out: TextIO, right: frozenset[int] = frozenset()) -> None:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for row in rows:
        cells = [
            c.rjust(widths[i]) if i in right else c.ljust(widths[i]) for i, c in enumerate(row)
        ]
        out.write("  ".join(cells).rstrip() + "\n")
