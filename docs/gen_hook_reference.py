"""Regenerate the hook reference in docs/writing-a-plugin.md from prism_core/hookspecs.py.

Usage: python docs/gen_hook_reference.py [--check]

The reference sits between the markers ``<!-- hooks:start -->`` and ``<!-- hooks:end -->``.
With ``--check`` nothing is written; the exit status is 1 when the page is out of date
(tests/test_hookspecs.py runs this check).
"""

from __future__ import annotations

import inspect
import sys
from pathlib import Path

DOC = Path(__file__).resolve().parent / "writing-a-plugin.md"
START, END = "<!-- hooks:start -->", "<!-- hooks:end -->"


def render() -> str:
    from prism_core import hookspecs

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
    head, _, rest = text.partition(START)
    _, _, tail = rest.partition(END)
    return head + render() + tail


def main() -> int:
    text = DOC.read_text(encoding="utf-8")
    new = updated(text)
    if "--check" in sys.argv[1:]:
        if new != text:
            print(f"{DOC} is out of date: run python docs/gen_hook_reference.py")
            return 1
        return 0
    DOC.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
