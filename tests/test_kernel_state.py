"""The kernel's state can be seen: every module-level object of ``prism_core/kernel/`` that
changes after import, and every ContextVar, is listed in docs/architecture.md ("State"), with
its owner and who may change it; and nothing is listed there that the kernel no longer has.

What counts (found by reading each module's source, not by importing it): a module-level name
bound to a ``dict``/``list``/``set`` display or comprehension, to a call of ``dict``, ``list``,
``set``, ``defaultdict``, ``deque``, a weak mapping, ``threading.local`` or ``ContextVar``, or
to an instance of a class of the module that is not a frozen dataclass; and every name a
function rebinds with ``global``.  ``__all__`` is not state.  A constant table is made
read-only (``MappingProxyType``, ``frozenset``, a tuple) rather than listed.
"""

from __future__ import annotations

import ast
import re

from .conftest import REPO

KERNEL = REPO / "prism_core" / "kernel"
DOC = REPO / "docs" / "architecture.md"
MUTABLE_CALLS = frozenset(
    {
        "dict",
        "list",
        "set",
        "defaultdict",
        "OrderedDict",
        "deque",
        "Counter",
        "bytearray",
        "WeakKeyDictionary",
        "WeakValueDictionary",
        "WeakSet",
        "local",
        "ContextVar",
    }
)
DISPLAYS = (ast.Dict, ast.List, ast.Set, ast.DictComp, ast.ListComp, ast.SetComp)


def _callee(call: ast.Call) -> str | None:
    func = call.func
    if isinstance(func, ast.Name):
        return func.id
    return func.attr if isinstance(func, ast.Attribute) else None


def _frozen(cls: ast.ClassDef) -> bool:
    """A frozen dataclass, or a named tuple: its instances never change."""
    if any(isinstance(b, ast.Name) and b.id == "NamedTuple" for b in cls.bases):
        return True
    return any(
        isinstance(d, ast.Call)
        and _callee(d) == "dataclass"
        and any(k.arg == "frozen" and getattr(k.value, "value", False) for k in d.keywords)
        for d in cls.decorator_list
    )


def state_of(source: str) -> dict[str, str]:
    """The module-level state of one module's ``source``: name -> what it is."""
    tree = ast.parse(source)
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    found: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            continue
        what = None
        if isinstance(value, DISPLAYS):
            what = type(value).__name__
        elif isinstance(value, ast.Call):
            callee = _callee(value)
            if callee in MUTABLE_CALLS:
                what = callee
            elif callee in classes and not _frozen(classes[callee]):
                what = f"a {callee}"
        for target in targets:
            if what and isinstance(target, ast.Name) and target.id != "__all__":
                found[target.id] = what
    for node in ast.walk(tree):
        if isinstance(node, ast.Global):
            for name in node.names:
                found.setdefault(name, "rebound with global")
    return found


def kernel_state() -> dict[str, str]:
    """``"<module path under kernel/>:<name>"`` -> what it is, for the whole kernel."""
    out: dict[str, str] = {}
    for path in sorted(KERNEL.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        for name, what in state_of(path.read_text()).items():
            out[f"{path.relative_to(KERNEL).as_posix()}:{name}"] = what
    return out


def documented() -> set[str]:
    """The entries of docs/architecture.md's "State" table: its rows' first cell,
    ``\\`dispatch/scope.py\\` \\`SCOPE\\``` (several names may share a row)."""
    text = DOC.read_text()
    section = text.split("\n## State\n", 1)[1].split("\n## ", 1)[0]
    out: set[str] = set()
    for line in section.splitlines():
        m = re.match(r"\| `([\w/]+\.py)` ((?:`\w+`,? ?)+)\|", line)
        if m:
            out.update(f"{m[1]}:{name}" for name in re.findall(r"`(\w+)`", m[2]))
    return out


def test_the_scan_finds_what_it_is_meant_to() -> None:
    source = """
import contextvars, threading
from dataclasses import dataclass
from types import MappingProxyType
__all__ = ["x"]
CACHE = {}
SEEN: set[str] = set()
TABLE = MappingProxyType({"a": 1})
NAMES = ("a", "b")
VAR = contextvars.ContextVar("var")
class Box: pass
@dataclass(frozen=True)
class Point: x: int = 0
BOX = Box()
ORIGIN = Point()
_current = None
def reset():
    global _current
    _current = 1
"""
    assert state_of(source) == {
        "CACHE": "Dict",
        "SEEN": "set",
        "VAR": "ContextVar",
        "BOX": "a Box",
        "_current": "rebound with global",
    }


def test_every_piece_of_kernel_state_is_documented() -> None:
    state, listed = kernel_state(), documented()
    missing = {key: what for key, what in state.items() if key not in listed}
    assert not missing, (
        'module-level state of the kernel that docs/architecture.md ("State") does not list: '
        f"{missing}; list each with its owner and who may change it, or make a constant "
        "read-only (MappingProxyType, frozenset, a tuple)"
    )


def test_nothing_is_documented_that_the_kernel_no_longer_has() -> None:
    stale = documented() - set(kernel_state())
    assert not stale, (
        f'docs/architecture.md ("State") lists state the kernel no longer has: {sorted(stale)}'
    )
