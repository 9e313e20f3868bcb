"""``prism lint --fix``: the mechanical rewrites, made in the text, not by regenerating it.

Two rewrites give the same values for every input the code could get: PRISM004, an operator on
a Prism array made its op (``a - b`` -> ``prism.subtract(a, b)``), and PRISM005, a framework
dtype given as ``dtype=`` to a Prism op made Prism's.  Each replaces the span of one node (the
positions :mod:`ast` gives), so everything else stays byte for byte; the result is parsed again
and written atomically, and fixing a fixed file changes nothing.  What is rewritten, what is
only reported, and why: docs/lint.md, "``--fix``".
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from prism_core.kernel.errors import Problem
from prism_core.lint.checker import Report
from prism_core.lint.config import LintConfig, load_config
from prism_core.lint.runner import check_source, iter_python_files, problem_for, read_source

__all__ = ["FixResult", "FixSummary", "fix_paths", "fix_source"]

_LINE_BREAK = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True)
class FixResult:
    """The text after the rewrites, and how many rewrites were made."""

    text: str
    fixes: int

    __module__ = "prism_core.lint"


@dataclass(frozen=True)
class FixSummary:
    """What ``fix_paths`` did: rewrites made, files changed, files that could not be fixed."""

    fixes: int
    files_changed: tuple[str, ...]
    problems: tuple[Problem, ...] = ()

    __module__ = "prism_core.lint"


class _Text:
    """Offsets into a source text from ast positions (1-based lines, UTF-8 byte columns)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = [0] + [m.end() for m in _LINE_BREAK.finditer(text)]
        match = _LINE_BREAK.search(text)
        self.newline = match.group() if match else "\n"

    def offset(self, line: int, byte_col: int) -> int:
        start = self.starts[line - 1]
        end = self.starts[line] if line < len(self.starts) else len(self.text)
        row = self.text[start:end]
        if row.isascii():
            return start + byte_col
        return start + len(row.encode("utf-8")[:byte_col].decode("utf-8", "replace"))

    def span(self, node: ast.AST) -> tuple[int, int]:
        return (
            self.offset(node.lineno, node.col_offset),  # type: ignore[attr-defined]
            self.offset(node.end_lineno, node.end_col_offset),  # type: ignore[attr-defined]
        )


class _Rewriter:
    def __init__(self, text: _Text, edits: dict[int, tuple[ast.AST, tuple[str, str]]], alias: str):
        self.t = text
        self.edits = edits
        self.alias = alias

    def edits_within(self, node: ast.AST) -> list[ast.AST]:
        """The outermost nodes to rewrite below ``node``, in source order."""
        found: list[ast.AST] = []
        stack = list(ast.iter_child_nodes(node))
        while stack:
            child = stack.pop()
            if id(child) in self.edits:
                found.append(child)
            else:
                stack.extend(ast.iter_child_nodes(child))
        return sorted(found, key=lambda n: self.t.span(n)[0])

    def render(self, node: ast.AST) -> str:
        """The text of ``node`` with every rewrite inside it made."""
        if id(node) in self.edits:
            kind, name = self.edits[id(node)][1]
            if kind == "operator":
                assert isinstance(node, ast.BinOp)
                return f"{self.alias}.{name}({self.render(node.left)}, {self.render(node.right)})"
            return f"{self.alias}.{name}"
        start, end = self.t.span(node)
        return self.splice(start, end, self.edits_within(node))

    def splice(self, start: int, end: int, nodes: Sequence[ast.AST]) -> str:
        parts, pos = [], start
        for n in nodes:
            s, e = self.t.span(n)
            parts.append(self.t.text[pos:s])
            parts.append(self.render(n))
            pos = e
        parts.append(self.t.text[pos:end])
        return "".join(parts)


def _rewritable(report: Report, text: _Text) -> bool:
    node = report.node
    if report.fix is None or node is None:
        return False
    if isinstance(node, ast.BinOp):
        # A comment between the operands would be lost with the operator.
        gap = text.text[text.span(node.left)[1] : text.span(node.right)[0]]
        return "#" not in gap
    return True


def _is_future(statement: ast.stmt) -> bool:
    return isinstance(statement, ast.ImportFrom) and statement.module == "__future__"


def _import_line(tree: ast.Module) -> int | None:
    """The line after which the added import goes (0: before the first line): after the
    imports at the top of the module (after its docstring), else after the docstring, else
    before the first statement; None where no line boundary is free there (statements joined
    by semicolons)."""
    body = tree.body
    i = 0
    after = 0
    if (
        body
        and isinstance(body[0], ast.Expr)
        and isinstance(body[0].value, ast.Constant)
        and isinstance(body[0].value.value, str)
    ):
        after = body[0].end_lineno or body[0].lineno
        i = 1
    first = i
    while i < len(body) and isinstance(body[i], (ast.Import, ast.ImportFrom)):
        after = body[i].end_lineno or body[i].lineno
        i += 1
    if i == len(body) or body[i].lineno > after:
        return after if i > first or after else (body[0].lineno - 1 if body else 0)
    # `import os; y = ...`: go before the first statement that is not a docstring or a
    # `from __future__` import (those must stay first), if it starts its own line.
    j = first
    while j < len(body) and _is_future(body[j]):
        j += 1
    previous_end = (body[j - 1].end_lineno or body[j - 1].lineno) if j > 0 else 0
    if j < len(body) and body[j].col_offset == 0 and body[j].lineno > previous_end:
        return body[j].lineno - 1
    return None


def _once(source: str, path: str | os.PathLike[str] | None, config: LintConfig) -> tuple[str, int]:
    tree, analysis = check_source(source, path, config)
    text = _Text(source)
    reports = [r for r in analysis.reports if _rewritable(r, text)]
    if not reports:
        return source, 0
    # A module-level `import prism_core [as X]` that always runs (not under an `if`), and whose
    # name nothing else binds.
    top = [
        a.asname or "prism_core"
        for stmt in tree.body
        if isinstance(stmt, ast.Import)
        for a in stmt.names
        if a.name == "prism_core" or (a.name.startswith("prism_core.") and not a.asname)
    ]
    alias = next((name for name in top if name in analysis.prism_aliases), None)
    add_import = alias is None
    if alias is None:
        alias = next((n for n in ("prism", "prism_core") if n not in analysis.names), None)
        if alias is None:
            return source, 0  # both names taken: nothing can name Prism here
    edits: dict[int, tuple[ast.AST, tuple[str, str]]] = {
        id(r.node): (r.node, r.fix) for r in reports if r.node is not None and r.fix is not None
    }
    rewriter = _Rewriter(text, edits, alias)
    nodes = rewriter.edits_within(tree)
    if not add_import:
        return rewriter.splice(0, len(source), nodes), len(edits)
    # The import goes at the start of a line between statements, where no rewrite can be.
    line = _import_line(tree)
    if line is None:
        return source, 0  # nowhere to put the import: reported, not fixed
    at = text.starts[line] if line < len(text.starts) else len(source)
    before = [n for n in nodes if text.span(n)[1] <= at]
    head = rewriter.splice(0, at, before)
    if head and not head.endswith(("\n", "\r")):
        head += text.newline
    statement = "import prism_core" if alias == "prism_core" else f"import prism_core as {alias}"
    tail = rewriter.splice(at, len(source), nodes[len(before) :])
    return head + statement + text.newline + tail, len(edits)


def fix_source(
    source: str,
    path: str | os.PathLike[str] | None = None,
    *,
    config: LintConfig | None = None,
) -> FixResult:
    """``source`` with the fixable findings rewritten (see the module docstring); findings
    that ``config`` or ``# noqa`` silence are left as they are.  Raises ``SyntaxError`` when
    ``source`` does not parse."""
    config = config if config is not None else LintConfig()
    text, total = source, 0
    for _ in range(8):  # one pass fixes everything it can; the loop is a guard, not a search
        new, fixes = _once(text, path, config)
        if not fixes:
            break
        try:
            ast.parse(new)
        except SyntaxError as exc:  # a bug of the fixer: never write such a file
            raise RuntimeError(
                f"prism lint --fix made code that does not parse ({exc.msg}, line {exc.lineno}); "
                "the file was left unchanged: please report this with the file"
            ) from None
        text, total = new, total + fixes
    return FixResult(text, total)


def _write_atomically(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        shutil.copymode(path, tmp)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def fix_paths(
    paths: Sequence[str | os.PathLike[str]], *, config: LintConfig | None = None
) -> FixSummary:
    """Rewrite the fixable findings in the files and directories ``paths`` in place (the files
    :func:`prism_core.lint.lint_paths` would lint).  A file that cannot be read, parsed or
    fixed is left as it is and listed in ``problems``."""
    config = config if config is not None else load_config(paths)
    total = 0
    changed: list[str] = []
    problems: list[Problem] = []
    for path in list(iter_python_files(paths, config)):  # a missing path: before any write
        try:
            source, encoding = read_source(path)
            result = fix_source(source, path, config=config)
            if result.fixes:
                # A symbolic link stays one: its target is rewritten (once: the files are
                # listed once per target).
                _write_atomically(path.resolve(), result.text.encode(encoding))
        except (OSError, SyntaxError, UnicodeError, ValueError, RecursionError) as exc:
            problems.append(problem_for(path, exc))
            continue
        except RuntimeError as exc:
            problems.append(Problem(str(path), 1, 1, message=str(exc)))
            continue
        if result.fixes:
            total += result.fixes
            changed.append(str(path))
    return FixSummary(total, tuple(changed), tuple(sorted(problems)))
