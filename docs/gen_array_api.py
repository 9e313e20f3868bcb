"""Regenerate the table of elementwise functions in docs/array-api.md from Prism's catalogue.

Usage: python docs/gen_array_api.py [--check]

The generated part sits between the markers ``<!-- functions:start -->`` and
``<!-- functions:end -->``: one row per elementwise function of the Array API standard, with the
Prism op that is it, its operands, the dtypes the standard defines it for, its NumPy function and
its work per element, read from ``prism_core._knowledge.elementwise`` and the catalogue.  With
``--check`` nothing is written; the exit status is 1 when the page is out of date
(tests/test_array_api_docs.py runs this check).
"""

from __future__ import annotations

import sys
from pathlib import Path

DOC = Path(__file__).resolve().parent / "array-api.md"
START, END = "<!-- functions:start -->", "<!-- functions:end -->"
#: The functions declared before the table: operands, dtypes, NumPy function, flops per element.
_OLDER = {
    "abs": ("x", "numeric", "abs", 1.0),
    "add": ("x1, x2", "numeric", "add", 1.0),
    "clip": ("x, min, max", "real", "clip", 1.0),
    "conj": ("x", "numeric", "conj", 1.0),
    "divide": ("x1, x2", "floating", "divide", 1.0),
    "exp": ("x", "floating", "exp", 1.0),
    "log": ("x", "floating", "log", 1.0),
    "maximum": ("x1, x2", "real", "maximum", 1.0),
    "minimum": ("x1, x2", "real", "minimum", 1.0),
    "multiply": ("x1, x2", "numeric", "multiply", 1.0),
    "pow": ("x1, x2", "numeric", "power", 1.0),
    "real": ("x", "numeric", "real", 1.0),
    "sqrt": ("x", "floating", "sqrt", 1.0),
    "square": ("x", "numeric", "square", 1.0),
    "subtract": ("x1, x2", "numeric", "subtract", 1.0),
}


def render() -> str:
    from prism_core._dispatch.catalogue import CATALOGUE
    from prism_core._knowledge.elementwise import ELEMENTWISE, STANDARD_ELEMENTWISE

    table = {e.name: e for e in ELEMENTWISE}
    parts = [
        START,
        "",
        "| function | Prism op | operands | the standard defines it for | NumPy | flops |",
        "|---|---|---|---|---|---|",
    ]
    for name, op in STANDARD_ELEMENTWISE.items():
        if op not in CATALOGUE:
            raise SystemExit(f"{name}: its op {op!r} is not in the catalogue")
        if name in table:
            e = table[name]
            row = ("x" if e.arity == 1 else "x1, x2", e.kinds, e.numpy, e.flops)
        else:
            row = _OLDER[name]
        operands, kinds, numpy, flops = row
        parts.append(
            f"| `{name}` | `{op}` | `{operands}` | {kinds.replace('_', ' ')} | "
            f"`numpy.{numpy}` | {flops:g} |"
        )
    parts += ["", f"{len(STANDARD_ELEMENTWISE)} functions.", "", END]
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
            print(f"{DOC} is out of date: run python docs/gen_array_api.py")
            return 1
        return 0
    DOC.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
