"""docs/array-api.md lists the elementwise functions as the catalogue declares them:
the generated table is current, and names every function of the standard's family."""

from __future__ import annotations

import subprocess
import sys

from prism_core.kernel.records.elementwise import STANDARD_ELEMENTWISE

from .conftest import REPO

#: A guard against a hung process, not a performance expectation.
HANG_GUARD_S = 120


def test_the_page_is_generated_from_the_catalogue() -> None:
    check = subprocess.run(
        [sys.executable, str(REPO / "docs" / "gen_array_api.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=HANG_GUARD_S,
    )
    assert check.returncode == 0, check.stdout + check.stderr


def test_the_page_lists_every_elementwise_function() -> None:
    doc = (REPO / "docs" / "array-api.md").read_text(encoding="utf-8")
    for name, op in STANDARD_ELEMENTWISE.items():
        assert f"| `{name}` | `{op}` |" in doc, name
    assert f"{len(STANDARD_ELEMENTWISE)} functions." in doc
    assert len(STANDARD_ELEMENTWISE) == 67  # the standard's 2024.12 elementwise functions
