"""Regenerate the hook reference in docs/writing-a-plugin.md from
prism_core/kernel/contract/hookspecs.py.

Usage: python docs/gen_hook_reference.py [--check]

The reference sits between the markers ``<!-- hooks:start -->`` and ``<!-- hooks:end -->``.
With ``--check`` nothing is written; the exit status is 1 when the page is out of date
(tests/test_hookspecs.py runs this check).
"""

from __future__ import annotations

import inspect
from pathlib import Path

from _generated import between, regenerate  # docs/_generated.py, beside this script

DOC = Path(__file__).resolve().parent / "writing-a-plugin.md"
START, END = "<!-- hooks:start -->", "<!-- hooks:end -->"


def render() -> str:
    from prism_core.kernel.contract import hookspecs

    parts = [START, ""]
    for name, fn in inspect.getmembers(hookspecs, inspect.isfunction):
        if not name.startswith("prism_"):
            continue
        signature = str(inspect.signature(fn)).replace("'", "")
        parts.append(f"### `{name}{signature}`")
        parts.append("")
        parts.append(inspect.cleandoc(fn.__doc__ or "").strip())
        parts.append("")
    parts.append(END)
    return "\n".join(parts)


def updated(text: str) -> str:
    return between(text, START, END, render())


def main() -> int:
    return regenerate(DOC, updated, "gen_hook_reference.py")


if __name__ == "__main__":
    raise SystemExit(main())
