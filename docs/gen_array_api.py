"""Regenerate the tables of functions in docs/array-api.md from Prism's catalogue.

Usage: python docs/gen_array_api.py [--check]

Two generated parts:

* between ``<!-- functions:start -->`` and ``<!-- functions:end -->``, one row per elementwise
  function of the Array API standard, with the Prism op that is it, its operands, the dtypes the
  standard defines it for, its NumPy function and its work per element, read from
  ``prism_core._knowledge.elementwise`` and the catalogue;
* between ``<!-- families:start -->`` and ``<!-- families:end -->``, a table per family declared
  as a table (``prism_core._knowledge.families``): each function's signature, what it returns,
  its work and its NumPy reference, and the backends with a variant of it (read from the
  installed plugins: the bundled ones must be installed, as the test extra does).

With ``--check`` nothing is written; the exit status is 1 when the page is out of date
(tests/test_array_api_docs.py runs this check).
"""

from __future__ import annotations

from pathlib import Path

from _generated import between, regenerate  # docs/_generated.py, beside this script

DOC = Path(__file__).resolve().parent / "array-api.md"
START, END = "<!-- functions:start -->", "<!-- functions:end -->"
FAMILIES_START, FAMILIES_END = "<!-- families:start -->", "<!-- families:end -->"
#: The families' headings, by their name in ``families.FAMILIES``.
HEADINGS = {
    "creation": "Creation and data-type functions",
    "manipulation": "Manipulation and indexing functions",
    "searching": "Searching, set and sorting functions",
    "statistics": "Statistical and utility functions",
    "linalg": "Linear algebra (main namespace and the `linalg` extension)",
    "fft": "The `fft` extension",
}
#: What the work kinds mean, for the tables' legend (``optable.WORK_KINDS``).
WORK_WORDS = {
    "view": "view",
    "copy": "copy",
    "create": "create",
    "reduction": "reduction",
    "scan": "scan",
    "sort": "n log n",
    "elementwise": "elementwise",
    "own": "own count",
}
#: Backends in the order the tables list them.
BACKENDS = ("numpy", "scipy", "torch", "cuda")
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


def render_families() -> str:
    import prism_core
    from prism_core._knowledge.families import FAMILIES

    # The bundled plugins, whatever the environment says of autoloading (the test suite's
    # turns it off): the tables are of what they provide.
    prism_core.extending.reload_plugins(prism_core.extending.PluginSettings(allow=BACKENDS[1:]))
    parts = [FAMILIES_START]
    total = 0
    for family, rows in FAMILIES.items():
        parts += [
            "",
            f"### {HEADINGS[family]}",
            "",
            "| function | returns | work | NumPy reference | backends |",
            "|---|---|---|---|---|",
        ]
        for row in rows:
            backends = {v.backend for v in prism_core.get_op(row.name).variants}
            have = ", ".join(b for b in BACKENDS if b in backends)
            module, _, attribute = row.numpy.partition(":")
            numpy = f"`{module}.{attribute}`" if module == "numpy" else "Prism's"
            name = f"`{row.name}{row.signature}`"
            parts.append(f"| {name} | {row.result} | {WORK_WORDS[row.work]} | {numpy} | {have} |")
        total += len(rows)
    parts += ["", f"{total} functions in these tables.", "", FAMILIES_END]
    return "\n".join(parts)


def updated(text: str) -> str:
    text = between(text, START, END, render())
    return between(text, FAMILIES_START, FAMILIES_END, render_families())


def main() -> int:
    return regenerate(DOC, updated, "gen_array_api.py")


if __name__ == "__main__":
    raise SystemExit(main())
