"""Regenerate the table of codes and their entries in docs/lint.md from prism_core/lint/codes.py.

Usage: python docs/gen_lint_codes.py [--check]

The generated part sits between the markers ``<!-- codes:start -->`` and ``<!-- codes:end -->``.
With ``--check`` nothing is written; the exit status is 1 when the page is out of date
(tests/test_lint.py runs this check).
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

DOC = Path(__file__).resolve().parent / "lint.md"
START, END = "<!-- codes:start -->", "<!-- codes:end -->"


def _wrap(text: str) -> str:
    return textwrap.fill(text, width=100, break_long_words=False, break_on_hyphens=False)


def render() -> str:
    from prism_core.lint.codes import CODES

    parts = [START, "", "| code | name | finds | `--fix` |", "|---|---|---|---|"]
    for c in CODES:
        anchor = f"{c.code.lower()}-{c.name}"
        fix = "yes" if c.fixable else ""
        parts.append(f"| [{c.code}](#{anchor}) | `{c.name}` | {c.summary} | {fix} |")
    parts.append("")
    for c in CODES:
        parts.append(f"### {c.code} {c.name}")
        parts.append("")
        parts.append(_wrap(f"{c.summary[0].upper()}{c.summary[1:]}.  {c.why}"))
        parts.append("")
        if c.fixable:
            parts.append(_wrap(f"`--fix`: {c.fix}."))
            parts.append("")
        parts.append("Bad:")
        parts.append("")
        parts.append("```python")
        parts.append(c.bad.rstrip("\n"))
        parts.append("```")
        parts.append("")
        parts.append("Good:")
        parts.append("")
        parts.append("```python")
        parts.append(c.good.rstrip("\n"))
        parts.append("```")
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
            print(f"{DOC} is out of date: run python docs/gen_lint_codes.py")
            return 1
        return 0
    DOC.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
