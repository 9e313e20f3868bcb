"""The size the build enforces (docs/architecture.md, "The kernel and the features").

* the kernel, ``prism_core/kernel/`` without its op records (data, beside it in
  ``kernel/records/``), is at most ``KERNEL_GOAL`` lines, and at most ``KERNEL_CEILING``: the
  size it has come down to.  Each cut lowers the ceiling to the new size, so the kernel never
  grows back;
* no module of ``prism_core`` is over ``MODULE_LINES`` lines;
* the kernel names its types: ``Any`` at most ``ANY_PER_KLOC`` times per thousand lines.

Lines are all lines of a file (``wc -l``): blank lines, comments and docstrings count, as in
``benchmarks/code_shape.py``.  A change that needs more splits a module by concern, or moves a
feature out of the kernel through an extension point, rather than raising the numbers.
"""

from __future__ import annotations

import ast
from pathlib import Path

from .conftest import REPO

KERNEL_GOAL = 12_000
KERNEL_CEILING = 11_930
MODULE_LINES = 800
ANY_PER_KLOC = 20
PACKAGE = REPO / "prism_core"
KERNEL = PACKAGE / "kernel"
RECORDS = KERNEL / "records"


def _lines(path: Path) -> int:
    return len(path.read_bytes().splitlines())


def _modules(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.py") if "__pycache__" not in p.parts)


def _kernel() -> tuple[int, str]:
    """The kernel's lines, and its five largest modules in words."""
    kernel = [p for p in _modules(KERNEL) if RECORDS not in p.parents]
    assert kernel and _modules(RECORDS)  # the layout this test measures
    largest = sorted(kernel, key=_lines, reverse=True)[:5]
    return sum(_lines(p) for p in kernel), ", ".join(
        f"{p.relative_to(REPO)} {_lines(p)}" for p in largest
    )


def test_the_kernel_never_grows_back() -> None:
    total, largest = _kernel()
    assert total <= KERNEL_CEILING, (
        f"prism_core/kernel/ is {total} lines, over its ceiling of {KERNEL_CEILING} (largest: "
        f"{largest}): cut it, or move a feature out through an extension point"
    )


def test_the_kernel_is_within_its_goal() -> None:
    total, largest = _kernel()
    assert total <= KERNEL_GOAL, f"prism_core/kernel/ is {total} lines (largest: {largest})"


def test_no_module_is_over_its_budget() -> None:
    over = {
        str(p.relative_to(REPO)): n for p in _modules(PACKAGE) if (n := _lines(p)) > MODULE_LINES
    }
    assert not over, f"modules over {MODULE_LINES} lines: {over}; split them by concern"


def test_the_kernel_is_typed() -> None:
    """``Any`` at most ``ANY_PER_KLOC`` times per thousand non-blank lines of the kernel, counted
    as ``benchmarks/code_shape.py`` counts it (the name ``Any`` and the attribute ``.Any``)."""
    uses, lines = 0, 0
    for path in _modules(KERNEL):
        if RECORDS in path.parents:
            continue
        source = path.read_text()
        lines += sum(1 for line in source.splitlines() if line.strip())
        uses += sum(
            1
            for node in ast.walk(ast.parse(source))
            if (isinstance(node, ast.Name) and node.id == "Any")
            or (isinstance(node, ast.Attribute) and node.attr == "Any")
        )
    assert uses * 1000 <= ANY_PER_KLOC * lines, (
        f"the kernel uses Any {uses} times in {lines} non-blank lines "
        f"({1000 * uses / lines:.1f} per thousand, at most {ANY_PER_KLOC}): name the type "
        "(prism_core.kernel.contract.array.Array for arrays, object for values passed on)"
    )
