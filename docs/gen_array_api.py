"""Regenerate the tables of functions in docs/array-api.md from Prism's catalogue.

Usage: python docs/gen_array_api.py [--check]

Two generated parts:

* between ``<!-- functions:start -->`` and ``<!-- functions:end -->``, one row per elementwise
  function of the Array API standard, with the Prism op that is it, its operands, the dtypes the
  standard defines it for, its NumPy function and its work per element, read from the op
  records (``prism_core.kernel.records.elementwise``);
* between ``<!-- families:start -->`` and ``<!-- families:end -->``, a table per other family
  (``prism_core.kernel.records.families``): each function's signature, what it returns,
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
    "extras": "Beyond the standard's families",
}
#: What the work kinds mean, for the tables' legend (``oprecord.WORK_KINDS``).
WORK_WORDS = {
    "view": "view",
    "copy": "copy",
    "create": "create",
    "reduction": "reduction",
    "scan": "scan",
    "sort": "n log n",
    "elementwise": "elementwise",
    "own": "own count",
    "unknown": "not counted",
}
#: Backends in the order the tables list them.
BACKENDS = ("numpy", "scipy", "torch", "cuda")


def render() -> str:
    from prism_core.kernel.dispatch.catalogue import CATALOGUE
    from prism_core.kernel.records.elementwise import RECORDS, STANDARD_ELEMENTWISE

    records = {r.name: r for r in RECORDS}
    parts = [
        START,
        "",
        "| function | Prism op | operands | the standard defines it for | NumPy | flops |",
        "|---|---|---|---|---|---|",
    ]
    for name, op in STANDARD_ELEMENTWISE.items():
        if op not in CATALOGUE:
            raise SystemExit(f"{name}: its op {op!r} is not in the catalogue")
        r = records[op]
        operands = r.signature[1:-1].replace(", /", "")
        numpy = r.numpy.replace(":", ".") if r.numpy.startswith("numpy:") else f"numpy.{op}"
        kinds = (r.kinds or "").replace("_", " ")
        parts.append(f"| `{name}` | `{op}` | `{operands}` | {kinds} | `{numpy}` | {r.flops:g} |")
    parts += ["", f"{len(STANDARD_ELEMENTWISE)} functions.", "", END]
    return "\n".join(parts)


def render_families() -> str:
    import prism_core
    from prism_core.kernel.records.families import FAMILIES

    # The bundled plugins, whatever the environment says of autoloading (the test suite's
    # turns it off): the tables are of what they provide.
    prism_core.extending.reload_plugins(prism_core.extending.PluginSettings(allow=BACKENDS[1:]))
    parts = [FAMILIES_START]
    total = 0
    for family, rows in FAMILIES.items():
        if family == "elementwise":  # the table above
            continue
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
            numpy = f"`{module}.{attribute}`" if module.startswith("numpy") else "Prism's"
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
