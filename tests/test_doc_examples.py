"""Every Python example of README.md and docs/*.md runs as written.

Each fenced block tagged ``python`` or ``pycon`` is one test, named ``PAGE:LINE`` after the line
of its opening fence. It runs in a fresh interpreter (``sys.executable``) in an empty temporary
directory, with Prism as the README's test command installs it (the installed plugins load, as
they do for a user) and a cache directory of its own. The conventions of the pages:

- A ``python`` block is a whole script: its imports included, and the
  ``if __name__ == "__main__":`` that Dask needs around code starting a cluster of processes.
- ``<!-- continues -->`` on the line directly above a block's fence makes the block a
  continuation of the Python block before it on the page: the test runs the two as one script
  (the block before may itself continue another).
- ``<!-- skip: REASON -->`` on the line directly above the fence skips the block, and the blocks
  continuing it, with that reason. It is for what cannot run on a CPU-only machine even
  simulated: a GPU is simulated with ``prism.device(NAME, simulate=True)``, a Dask cluster is a
  ``LocalCluster`` (``prism.distributed.connect()``).
- A ``pycon`` block is a ``>>>`` transcript, checked by :mod:`doctest` with ``ELLIPSIS`` and
  ``NORMALIZE_WHITESPACE``: ``...`` in an expected output stands for text that differs between
  machines or runs (addresses, this host's CPU).
- ``python sketch`` (a second word in the info string) marks a signature or an outline of an
  API, which is not run. Blocks of other languages (``bash``, ``console``, ``text``) are not run.

A failure names the page and shows the interpreter's or doctest's report, whose line numbers
are the page's: the script holds each block at the lines it has on its page.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from .conftest import REPO

#: A guard against a hung example (a cluster that never starts), not a performance expectation.
HANG_GUARD_S = 120

PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
FENCE = re.compile(r"^(?P<indent> *)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
MARKER = re.compile(r"^\s*<!--\s*(?:(?P<continues>continues)|skip:\s*(?P<reason>\S.*?))\s*-->\s*$")


@dataclass(frozen=True)
class Block:
    """One ``python`` or ``pycon`` block of a page, its lines without the fence's indent."""

    page: Path
    line: int  # of the opening fence, from 1
    language: str
    lines: tuple[str, ...]
    continues: bool
    skip: str | None  # the reason

    @property
    def name(self) -> str:
        page = self.page.relative_to(REPO) if self.page.is_relative_to(REPO) else self.page
        return f"{page.as_posix()}:{self.line}"


def blocks(page: Path) -> list[Block]:
    """The blocks of ``page`` that run, in order (sketches and other languages left out)."""
    text = page.read_text(encoding="utf-8").splitlines()
    found: list[Block] = []
    i = 0
    while i < len(text):
        opening = FENCE.match(text[i])
        if opening is None:
            i += 1
            continue
        indent, fence, info = len(opening["indent"]), opening["fence"], opening["info"].split()
        closing = re.compile(rf" *{re.escape(fence[0])}{{{len(fence)},}}\s*")
        end = next((j for j in range(i + 1, len(text)) if closing.fullmatch(text[j])), len(text))
        if info[:1] in (["python"], ["pycon"]) and "sketch" not in info[1:]:
            marker = MARKER.match(text[i - 1]) if i else None
            found.append(
                Block(
                    page,
                    i + 1,
                    info[0],
                    tuple(line[indent:] for line in text[i + 1 : end]),
                    continues=bool(marker and marker["continues"]),
                    skip=marker["reason"] if marker else None,
                )
            )
        i = end + 1
    return found


def chain(block: Block, page_blocks: list[Block]) -> list[Block]:
    """``block`` and the blocks it continues, first to last."""
    if not block.continues:
        return [block]
    index = page_blocks.index(block)
    if index == 0:
        pytest.fail(
            f"{block.name}: <!-- continues --> but no Python block before it", pytrace=False
        )
    before = page_blocks[index - 1]
    if before.language != block.language:
        pytest.fail(
            f"{block.name}: a {block.language} block continues {before.name}, a "
            f"{before.language} block; a continuation has its block's language",
            pytrace=False,
        )
    return [*chain(before, page_blocks), block]


def script(parts: list[Block]) -> str:
    """The blocks as one file, each at the line numbers it has on its page."""
    lines: list[str] = []
    for part in parts:
        lines.extend([""] * (part.line - len(lines)))
        lines.extend(part.lines)
    return "\n".join(lines) + "\n"


BLOCKS = {page: blocks(page) for page in PAGES}


@pytest.mark.parametrize(
    "block", [b for page in PAGES for b in BLOCKS[page]], ids=lambda block: block.name
)
def test_example_runs(block: Block, tmp_path: Path) -> None:
    parts = chain(block, BLOCKS[block.page])
    skipped = next((part for part in parts if part.skip), None)
    if skipped is not None:
        pytest.skip(f"{skipped.name}: {skipped.skip}")
    work = tmp_path / "work"
    work.mkdir()
    stem = block.page.name.replace(".", "_").replace("-", "_")  # never a module's name
    if block.language == "python":
        path = work / f"{stem}.py"
        command = [sys.executable, path.name]
    else:
        path = work / f"{stem}.txt"
        options = ["-o", "ELLIPSIS", "-o", "NORMALIZE_WHITESPACE"]
        command = [sys.executable, "-m", "doctest", *options, path.name]
    path.write_text(script(parts), encoding="utf-8")
    # The suite turns plugin autoload off; a reader of the docs has it on.
    env = {k: v for k, v in os.environ.items() if k != "PRISM_DISABLE_PLUGIN_AUTOLOAD"}
    env["PRISM_CACHE_DIR"] = str(tmp_path / "cache")
    done = subprocess.run(
        command, cwd=work, env=env, capture_output=True, text=True, timeout=HANG_GUARD_S
    )
    if done.returncode != 0:
        ran = " + ".join(part.name for part in parts)
        pytest.fail(
            f"{ran} failed (the line numbers are the page's):\n{done.stdout}\n{done.stderr}",
            pytrace=False,
        )


def test_the_conventions(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "```python\nx = 1\n```\n"
        "<!-- continues -->\n```python\nprint(x)\n```\n"
        "1. A list item:\n\n   <!-- skip: needs a GPU -->\n   ```python\n   gpu()\n   ```\n"
        "```python sketch\nf(a, *, b=None)\n```\n"
        "````markdown\n```python\nnot a block of this page\n```\n````\n"
        "```bash\nprism doctor\n```\n"
        "```pycon\n>>> 1 + 1\n2\n```\n",
        encoding="utf-8",
    )
    found = blocks(page)
    assert [(b.line, b.language, b.lines, b.continues, b.skip) for b in found] == [
        (1, "python", ("x = 1",), False, None),
        (5, "python", ("print(x)",), True, None),
        (11, "python", ("gpu()",), False, "needs a GPU"),
        (25, "pycon", (">>> 1 + 1", "2"), False, None),
    ]
    assert chain(found[1], found) == found[:2]
    assert script(found[:2]) == "\nx = 1\n\n\n\nprint(x)\n"
