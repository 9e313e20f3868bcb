"""Regenerate the table of codes and their entries in docs/lint.md from prism_core/lint/codes.py.

Usage: python docs/gen_lint_codes.py [--check]

The generated part sits between the markers ``<!-- codes:start -->`` and ``<!-- codes:end -->``.
With ``--check`` nothing is written; the exit status is 1 when the page is out of date
(tests/test_lint.py runs this check).
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from _generated import between, regenerate  # docs/_generated.py, beside this script

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
    return between(text, START, END, render())


def main() -> int:
    return regenerate(DOC, updated, "gen_lint_codes.py")


if __name__ == "__main__":
    raise SystemExit(main())
