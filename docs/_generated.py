"""What the docs generators share (``gen_*.py``): a page's generated parts sit between marker
comments; ``--check`` says whether the page is current instead of writing it."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path


def between(text: str, start: str, end: str, new: str) -> str:
    """``text`` with what lies between the markers ``start`` and ``end`` (both included)
    replaced by ``new`` (which holds the markers again)."""
    head, _, rest = text.partition(start)
    _, _, tail = rest.partition(end)
    return head + new + tail


def regenerate(doc: Path, updated: Callable[[str], str], script: str) -> int:
    """The generator's ``main``: write ``doc`` as ``updated`` makes it, or with ``--check``
    write nothing and return 1 (saying to run ``script``) when it is out of date."""
    text = doc.read_text(encoding="utf-8")
    new = updated(text)
    if "--check" in sys.argv[1:]:
        if new != text:
            print(f"{doc} is out of date: run python docs/{script}")
            return 1
        return 0
    doc.write_text(new, encoding="utf-8")
    return 0
