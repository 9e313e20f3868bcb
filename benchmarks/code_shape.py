"""The shape of ``prism_core``'s code: the numbers a redesign reports before and after.

Reads a checkout's ``prism_core/`` (this one by default, another with ``--root DIR``) and
measures, without running any of it except where a number needs the package itself:

* **lines**: all lines and non-blank lines (comments and docstrings count) of the kernel
  (``KERNEL`` below), of all of ``prism_core`` and of each top-level subpackage or module;
  the largest module and the five largest;
* **top-level names**: ``len(prism_core.__all__)``, the public names of ``dir(prism_core)``
  outside ``__all__`` (the ops its module ``__getattr__`` makes, and other globals) and
  ``len(prism_core.all_ops())``: imported in a fresh interpreter with plugin autoload off, so
  that installed plugins change nothing;
* **complexity**: the share of functions and methods (every ``def`` and ``async def``,
  nested ones included) whose McCabe cyclomatic complexity is 11 or more (the ``mccabe``
  package if importable, else ruff's C901 with max-complexity 10, ``# noqa`` ignored; the two
  score some statements differently, so compare runs made with one: ``--complexity``);
* **Any per kloc**: uses of ``Any`` (``ast.Name`` ``Any`` and ``ast.Attribute`` ``.Any``, so
  neither imports nor strings nor comments) per 1000 non-blank lines, beside installed pluggy's;
* **import cycles**: the strongly connected components of grimp's module import graph, with
  every import counted (``if TYPE_CHECKING:`` and function-level ones) and with the
  ``TYPE_CHECKING`` ones left out;
* **private reach**: names with one leading underscore that one top-level part of
  ``prism_core`` takes from another (``from prism_core.X import _name``, ``mod._name`` through
  a module alias), and module-level one-item lists used as mutable cells (``NAME = [None]``,
  later ``NAME[0] = ...`` or ``NAME[:] = ...``, in its module or through an alias of it).

Name resolution is per module, not per scope: an alias is whatever a module's imports bind the
name to anywhere in it.

Usage::

    python benchmarks/code_shape.py [--root DIR] [--label TEXT] [--json PATH]
        [--complexity auto|mccabe|ruff]

prints the Markdown report; ``--json PATH`` also writes every number as JSON.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import importlib.metadata
import importlib.util
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]

#: The kernel: what the rest of Prism is built on. Globs relative to the checkout's root; a
#: pattern that matches nothing is skipped. A file matched by two groups counts once, in the
#: first. ``KERNEL`` is the package ``prism_core/kernel/`` (its op records, data, beside it:
#: ``KERNEL_BESIDE``); ``KERNEL_BEFORE`` is the kernel of a tree from before that package, the
#: same parts spread over six folders, the NumPy backend and the backend kit counted in it.
KERNEL: dict[str, tuple[str, ...]] = {
    "descriptions": ("prism_core/kernel/description/**/*.py",),
    "plugin discovery": ("prism_core/kernel/plugins.py", "prism_core/kernel/distributions.py"),
    "host": (
        "prism_core/kernel/host.py",
        "prism_core/kernel/host_cpu.py",
        "prism_core/kernel/devices.py",
        "prism_core/kernel/partition_match.py",
    ),
    "contract": ("prism_core/kernel/contract/**/*.py",),
    "threads": ("prism_core/kernel/threads.py",),
    "dispatch": ("prism_core/kernel/dispatch/**/*.py", "prism_core/kernel/oprecord.py"),
    "base modules": ("prism_core/kernel/*.py",),
}
KERNEL_BESIDE: tuple[str, ...] = ("prism_core/kernel/records/**/*.py",)
KERNEL_BEFORE: dict[str, tuple[str, ...]] = {
    "descriptions": ("prism_core/_description/**/*.py",),
    "plugin discovery": ("prism_core/_knowledge/plugins.py",),
    "host": ("prism_core/_knowledge/host.py", "prism_core/nvidia_smi.py"),
    "backends": ("prism_core/_contract/**/*.py", "prism_core/_knowledge/backend_registry.py"),
    "threads": ("prism_core/_knowledge/threads.py",),
    "dispatch": ("prism_core/_dispatch/**/*.py",),
    "hookspecs": ("prism_core/hookspecs.py",),
    "backend_kit": ("prism_core/backend_kit/**/*.py",),
    "builtin NumPy backend": ("prism_core/_builtin/**/*.py",),
    "base modules": (
        "prism_core/_errors.py",
        "prism_core/_config.py",
        "prism_core/_events.py",
        "prism_core/_values.py",
        "prism_core/_version.py",
        "prism_core/_quantities.py",
        "prism_core/__init__.py",
    ),
}


def kernel_groups(root: Path) -> tuple[dict[str, tuple[str, ...]], tuple[str, ...]]:
    """The kernel's groups of ``root``'s layout, and the globs beside it (never counted)."""
    if (root / "prism_core" / "kernel").is_dir():
        return KERNEL, KERNEL_BESIDE
    return KERNEL_BEFORE, ()


#: Complexity at or above which a function counts as too complex (ruff's max-complexity + 1).
CC_LIMIT = 11
PACKAGE = "prism_core"

# Run in a fresh interpreter whose PYTHONPATH and working directory are the measured root:
# the public names of the package found there. argv[1] is the root, to check it was that one.
NAMES_CODE = """
import json, os, sys
import prism_core
root = os.path.realpath(sys.argv[1])
where = os.path.realpath(prism_core.__file__)
if not where.startswith(root + os.sep):
    sys.exit(f"imported prism_core from {where}, not from {root}")
names = list(prism_core.__all__)
public = set(names)
extra = sorted(n for n in dir(prism_core) if n not in public and not n.startswith("_"))
ops = sorted(prism_core.all_ops()) if hasattr(prism_core, "all_ops") else None
print(json.dumps({"all": names, "dir_extra": extra, "ops": ops}))
"""

# The same, for grimp's import graph (grimp reads the files of the package find_spec finds).
GRAPH_CODE = """
import importlib.util, json, os, sys
import grimp
root = os.path.realpath(sys.argv[1])
where = os.path.realpath(importlib.util.find_spec("prism_core").origin)
if not where.startswith(root + os.sep):
    sys.exit(f"grimp would read prism_core from {where}, not from {root}")
graphs = {}
for label, exclude in (("all", False), ("runtime", True)):
    graph = grimp.build_graph(
        "prism_core",
        include_external_packages=False,
        exclude_type_checking_imports=exclude,
        cache_dir=None,
    )
    graphs[label] = {m: sorted(graph.find_modules_directly_imported_by(m)) for m in graph.modules}
print(json.dumps(graphs))
"""


# -- the files ------------------------------------------------------------------------------


@dataclass
class Module:
    """One ``.py`` file of the package: its dotted name, its text and its syntax tree."""

    name: str
    path: Path  # relative to the root
    text: str
    tree: ast.Module
    lines: int = field(init=False)
    nonblank: int = field(init=False)

    def __post_init__(self) -> None:
        rows = self.text.splitlines()
        self.lines = len(rows)
        self.nonblank = sum(1 for row in rows if row.strip())

    @property
    def unit(self) -> str:
        """The top-level part of the package it belongs to: ``_dispatch/``, ``_cli.py``."""
        return unit_of(self.path)

    @property
    def is_package(self) -> bool:
        return self.path.name == "__init__.py"


def unit_of(path: Path) -> str:
    first = path.parts[1]
    return first if len(path.parts) == 2 else first + "/"


def module_name(path: Path) -> str:
    parts = list(path.with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def python_files(directory: Path) -> list[Path]:
    return sorted(p for p in directory.rglob("*.py") if "__pycache__" not in p.parts)


def load_package(root: Path) -> dict[str, Module]:
    modules: dict[str, Module] = {}
    for path in python_files(root / PACKAGE):
        rel = path.relative_to(root)
        text = path.read_text(encoding="utf-8")
        try:
            tree = ast.parse(text, filename=str(path))
        except SyntaxError as exc:
            raise SystemExit(f"{path}: cannot parse: {exc}") from None
        modules[module_name(rel)] = Module(module_name(rel), rel, text, tree)
    return modules


# -- lines -----------------------------------------------------------------------------------


def line_counts(root: Path, modules: dict[str, Module]) -> dict[str, Any]:
    by_path = {m.path: m for m in modules.values()}
    kernel, beside = kernel_groups(root)
    seen: set[Path] = {p.relative_to(root) for pattern in beside for p in root.glob(pattern)}
    outside = len(seen)
    groups: list[dict[str, Any]] = []
    unmatched: list[str] = []
    for group, patterns in kernel.items():
        files: list[Path] = []
        for pattern in patterns:
            found = sorted(p.relative_to(root) for p in root.glob(pattern) if p.is_file())
            found = [p for p in found if p in by_path]
            if not found:
                unmatched.append(pattern)
            files += [p for p in found if p not in seen and p not in files]
        seen.update(files)
        groups.append(
            {
                "group": group,
                "patterns": list(patterns),
                "files": [str(p) for p in files],
                "lines": sum(by_path[p].lines for p in files),
                "nonblank": sum(by_path[p].nonblank for p in files),
            }
        )
    units: dict[str, dict[str, int]] = {}
    for m in modules.values():
        unit = units.setdefault(m.unit, {"files": 0, "lines": 0, "nonblank": 0})
        unit["files"] += 1
        unit["lines"] += m.lines
        unit["nonblank"] += m.nonblank
    largest = sorted(modules.values(), key=lambda m: (-m.lines, str(m.path)))[:5]
    return {
        "kernel": {
            "files": len(seen) - outside,
            "lines": sum(g["lines"] for g in groups),
            "nonblank": sum(g["nonblank"] for g in groups),
            "groups": groups,
            "unmatched_patterns": unmatched,
        },
        "total": {
            "files": len(modules),
            "lines": sum(m.lines for m in modules.values()),
            "nonblank": sum(m.nonblank for m in modules.values()),
        },
        "units": dict(sorted(units.items(), key=lambda kv: (-kv[1]["lines"], kv[0]))),
        "largest": [
            {"path": str(m.path), "lines": m.lines, "nonblank": m.nonblank} for m in largest
        ],
    }


# -- complexity ------------------------------------------------------------------------------


def functions(tree: ast.Module) -> list[tuple[int, str]]:
    """(line of the ``def``, qualified name) of every function, nested ones included."""
    found: list[tuple[int, str]] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                found.append((child.lineno, prefix + child.name))
                visit(child, f"{prefix}{child.name}.")
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            else:
                visit(child, prefix)

    visit(tree, "")
    return found


def complexity(root: Path, modules: dict[str, Module], tool: str) -> dict[str, Any]:
    """The functions at complexity CC_LIMIT or more, by ``tool`` (auto: mccabe, else ruff)."""
    defs = {(str(m.path), line): name for m in modules.values() for line, name in functions(m.tree)}
    mccabe = None
    if tool != "ruff":
        try:
            mccabe = importlib.import_module("mccabe")
        except ImportError:
            if tool == "mccabe":
                raise SystemExit(
                    "--complexity mccabe: the mccabe package is not installed"
                ) from None
    if mccabe is None:
        tool, scores = ruff_complexity(root)
    else:
        tool = f"mccabe {importlib.metadata.version('mccabe')}"
        scores = mccabe_complexity(mccabe, modules)
    complex_: list[dict[str, Any]] = []
    for (path, line), score in sorted(scores.items()):
        if score < CC_LIMIT:
            continue
        if (path, line) not in defs:
            raise SystemExit(f"{path}:{line}: the complexity report names no def on this line")
        complex_.append({"path": path, "line": line, "name": defs[path, line], "cc": score})
    complex_.sort(key=lambda f: (-f["cc"], f["path"], f["line"]))
    return {
        "tool": tool,
        "limit": CC_LIMIT,
        "count": len(complex_),
        "total": len(defs),
        "share": len(complex_) / len(defs) if defs else 0.0,
        "functions": complex_,
    }


def mccabe_complexity(mccabe: Any, modules: dict[str, Module]) -> dict[tuple[str, int], int]:
    """Each def's complexity, its nested functions included (as ruff counts them)."""
    scores: dict[tuple[str, int], int] = {}
    for m in modules.values():
        for node in ast.walk(m.tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                visitor = mccabe.PathGraphingAstVisitor()
                visitor.preorder(node, visitor)
                (graph,) = visitor.graphs.values()
                scores[str(m.path), node.lineno] = int(graph.complexity())
    return scores


def ruff_complexity(root: Path) -> tuple[str, dict[tuple[str, int], int]]:
    """The functions ruff's C901 finds at complexity CC_LIMIT or more, and ruff's version."""
    sibling = Path(sys.executable).parent / "ruff"
    ruff = str(sibling) if sibling.exists() else shutil.which("ruff")
    if ruff is None:
        raise SystemExit("neither the mccabe package nor a ruff executable: install one")
    command = [
        ruff, "check", "--isolated", "--no-cache", "--ignore-noqa", "--exit-zero",
        "--select", "C901", "--config", f"lint.mccabe.max-complexity={CC_LIMIT - 1}",
        "--output-format", "json", PACKAGE,
    ]  # fmt: skip
    done = subprocess.run(command, cwd=root, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed in {root}:\n{done.stderr}")
    scores: dict[tuple[str, int], int] = {}
    for diagnostic in json.loads(done.stdout):
        found = re.search(r"\((\d+) > \d+\)", diagnostic["message"])
        if diagnostic["code"] != "C901" or found is None:
            raise SystemExit(f"ruff: unexpected diagnostic {diagnostic['message']!r}")
        path = Path(diagnostic["filename"]).resolve().relative_to(root.resolve())
        scores[str(path), diagnostic["location"]["row"]] = int(found.group(1))
    version = subprocess.run([ruff, "--version"], capture_output=True, text=True, check=True)
    return version.stdout.strip(), scores


# -- Any -------------------------------------------------------------------------------------


def count_any(tree: ast.AST) -> int:
    return sum(
        (isinstance(node, ast.Name) and node.id == "Any")
        or (isinstance(node, ast.Attribute) and node.attr == "Any")
        for node in ast.walk(tree)
    )


def any_density(modules: dict[str, Module], kernel: set[str] | None = None) -> dict[str, Any]:
    """``Any`` per thousand non-blank lines of ``modules``, of those of them whose paths are in
    ``kernel`` (the kernel's files, as ``line_counts`` groups them), and of pluggy."""

    def density(chosen: list[Module]) -> dict[str, Any]:
        uses = sum(count_any(m.tree) for m in chosen)
        nonblank = sum(m.nonblank for m in chosen)
        return {
            "uses": uses,
            "nonblank": nonblank,
            "per_kloc": 1000 * uses / nonblank if nonblank else 0.0,
        }

    result = density(list(modules.values()))
    if kernel is not None:
        result["kernel"] = density([m for m in modules.values() if str(m.path) in kernel])
    spec = importlib.util.find_spec("pluggy")
    if spec is not None and spec.submodule_search_locations:
        directory = Path(next(iter(spec.submodule_search_locations)))
        p_uses = p_nonblank = 0
        for path in python_files(directory):
            text = path.read_text(encoding="utf-8")
            p_uses += count_any(ast.parse(text, filename=str(path)))
            p_nonblank += sum(1 for row in text.splitlines() if row.strip())
        result["pluggy"] = {
            "version": importlib.metadata.version("pluggy"),
            "path": str(directory),
            "uses": p_uses,
            "nonblank": p_nonblank,
            "per_kloc": 1000 * p_uses / p_nonblank if p_nonblank else 0.0,
        }
    return result


# -- the fresh interpreters ------------------------------------------------------------------


def run_in(root: Path, code: str, what: str) -> Any:
    """Run ``code`` in a fresh interpreter that finds the root's prism_core first."""
    with tempfile.TemporaryDirectory(prefix="code-shape-") as cache:
        env = dict(
            os.environ,
            PYTHONPATH=str(root),
            PRISM_DISABLE_PLUGIN_AUTOLOAD="1",
            PRISM_CACHE_DIR=cache,
        )
        done = subprocess.run(
            [sys.executable, "-c", code, str(root)],
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
    if done.returncode != 0:
        raise SystemExit(f"{what} for {root} failed:\n{done.stderr.strip()}")
    return json.loads(done.stdout)


def top_level_names(root: Path) -> dict[str, Any]:
    found = run_in(root, NAMES_CODE, "reading prism_core's names")
    ops: list[str] | None = found["ops"]
    extra: list[str] = found["dir_extra"]
    op_names = set(ops or ())
    return {
        "all": len(found["all"]),
        "all_unique": len(set(found["all"])),
        "dir_extra": len(extra),
        "dir_extra_ops": sum(n in op_names for n in extra),
        "dir_extra_other": sorted(n for n in extra if n not in op_names),
        "all_ops": None if ops is None else len(ops),
        "all_ops_top_level": None if ops is None else sum("." not in n for n in ops),
    }


# -- cycles ----------------------------------------------------------------------------------


def strongly_connected(graph: dict[str, list[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components, without recursion."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    components: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work: list[tuple[str, int]] = [(start, 0)]
        while work:
            node, i = work.pop()
            if i == 0:
                index[node] = low[node] = counter
                counter += 1
                stack.append(node)
                on_stack.add(node)
            targets = graph.get(node, [])
            while i < len(targets):
                target = targets[i]
                i += 1
                if target not in index:
                    work.append((node, i))
                    work.append((target, 0))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                if low[node] == index[node]:
                    component: list[str] = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    components.append(sorted(component))
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
    return components


def cycles(graph: dict[str, list[str]]) -> dict[str, Any]:
    cyclic = [
        c
        for c in strongly_connected(graph)
        if len(c) > 1 or c[0] in graph.get(c[0], [])  # a module importing itself
    ]
    cyclic.sort(key=lambda c: (-len(c), c))
    return {
        "modules": len(graph),
        "imports": sum(len(targets) for targets in graph.values()),
        "modules_in_cycles": sum(len(c) for c in cyclic),
        "largest_scc": len(cyclic[0]) if cyclic else 0,
        "sccs": cyclic,
    }


def import_cycles(root: Path) -> dict[str, Any]:
    graphs = run_in(root, GRAPH_CODE, "building grimp's import graph")
    return {
        "grimp": importlib.metadata.version("grimp"),
        "all": cycles(graphs["all"]),
        "runtime": cycles(graphs["runtime"]),
    }


# -- private reach ---------------------------------------------------------------------------


def is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def imported_from(module: Module, node: ast.ImportFrom) -> str:
    """The absolute module an ``ImportFrom`` names, relative imports resolved."""
    if not node.level:
        return node.module or ""
    parts = module.name.split(".")
    base = parts if module.is_package else parts[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def aliases(module: Module, names: set[str]) -> dict[str, str]:
    """Local name -> the package module it is bound to by the module's imports."""
    bound: dict[str, str] = {}
    for node in ast.walk(module.tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] != PACKAGE:
                    continue
                if alias.asname:
                    bound[alias.asname] = alias.name
                else:
                    bound[PACKAGE] = PACKAGE
        elif isinstance(node, ast.ImportFrom):
            source = imported_from(module, node)
            for alias in node.names:
                if f"{source}.{alias.name}" in names:
                    bound[alias.asname or alias.name] = f"{source}.{alias.name}"
    return bound


def dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        head = dotted(node.value)
        return None if head is None else f"{head}.{node.attr}"
    return None


def module_of(node: ast.expr, bound: dict[str, str], names: set[str]) -> str | None:
    """The package module an expression (``alias``, ``prism_core.a.b``) stands for, if any."""
    text = dotted(node)
    if text is None:
        return None
    head, _, rest = text.partition(".")
    if head not in bound:
        return None
    full = bound[head] + ("." + rest if rest else "")
    return full if full in names else None


def private_imports(modules: dict[str, Module]) -> dict[str, Any]:
    names = set(modules)
    found: list[dict[str, Any]] = []
    for m in modules.values():
        bound = aliases(m, names)
        taken: list[tuple[str, str, int, str]] = []  # (module, name, line, how)
        for node in ast.walk(m.tree):
            if isinstance(node, ast.ImportFrom):
                source = imported_from(m, node)
                if source in names:
                    taken += [
                        (source, alias.name, node.lineno, "from-import")
                        for alias in node.names
                        if is_private(alias.name)
                    ]
            elif isinstance(node, ast.Attribute) and is_private(node.attr):
                target = module_of(node.value, bound, names)
                if target is not None:
                    taken.append((target, node.attr, node.lineno, "attribute"))
        for target, name, line, how in taken:
            submodule = f"{target}.{name}" in names
            if (target == PACKAGE and submodule) or modules[target].unit == m.unit:
                # The package's top-level modules are all underscored: taking one is no reach.
                continue
            found.append(
                {
                    "importer": str(m.path),
                    "line": line,
                    "target": target,
                    "name": name,
                    "kind": "module" if submodule else "name",
                    "how": how,
                }
            )
    found.sort(key=lambda f: (f["importer"], f["line"], f["name"]))
    return {
        "count": len(found),
        "distinct": len({(f["importer"], f["target"], f["name"]) for f in found}),
        "imports": found,
    }


def cell_target(
    node: ast.expr, module: Module, bound: dict[str, str], names: set[str]
) -> tuple[str, str] | None:
    """(module, NAME) when ``node`` is ``NAME[0]`` / ``NAME[:]`` / ``alias.NAME[0]``."""
    if not isinstance(node, ast.Subscript):
        return None
    index = node.slice
    whole = isinstance(index, ast.Slice) and index.lower is index.upper is index.step is None
    first = isinstance(index, ast.Constant) and index.value == 0
    if not (whole or first):
        return None
    if isinstance(node.value, ast.Name):
        return module.name, node.value.id
    if isinstance(node.value, ast.Attribute):
        owner = module_of(node.value.value, bound, names)
        if owner is not None:
            return owner, node.value.attr
    return None


def mutable_cells(modules: dict[str, Module]) -> dict[str, Any]:
    names = set(modules)
    declared: dict[tuple[str, str], int] = {}
    for m in modules.values():
        for statement in m.tree.body:
            target: ast.expr | None = None
            value: ast.expr | None = None
            if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
                target, value = statement.targets[0], statement.value
            elif isinstance(statement, ast.AnnAssign):
                target, value = statement.target, statement.value
            if (
                isinstance(target, ast.Name)
                and isinstance(value, ast.List)
                and len(value.elts) <= 1
            ):
                declared[m.name, target.id] = statement.lineno
    writes: dict[tuple[str, str], list[str]] = {}
    for m in modules.values():
        bound = aliases(m, names)
        for node in ast.walk(m.tree):
            if isinstance(node, ast.Assign):
                targets = node.targets
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
                targets = [node.target]
            else:
                continue
            for target in targets:
                cell = cell_target(target, m, bound, names)
                if cell is not None and cell in declared:
                    writes.setdefault(cell, []).append(f"{m.path}:{node.lineno}")
    cells = [
        {
            "path": str(modules[module].path),
            "line": declared[module, name],
            "name": name,
            "written_at": sorted(sites),
        }
        for (module, name), sites in writes.items()
    ]
    cells.sort(key=lambda c: (c["path"], c["line"]))
    return {"count": len(cells), "cells": cells}


# -- the report ------------------------------------------------------------------------------


def measure(root: Path, label: str | None, tool: str = "auto") -> dict[str, Any]:
    if not (root / PACKAGE / "__init__.py").is_file():
        raise SystemExit(f"--root {root}: no {PACKAGE}/__init__.py there")
    modules = load_package(root)
    lines = line_counts(root, modules)
    kernel = {path for group in lines["kernel"]["groups"] for path in group["files"]}
    return {
        "root": str(root),
        "label": label,
        "python": platform.python_version(),
        "lines": lines,
        "names": top_level_names(root),
        "complexity": complexity(root, modules, tool),
        "any": any_density(modules, kernel),
        "cycles": import_cycles(root),
        "private_imports": private_imports(modules),
        "mutable_cells": mutable_cells(modules),
    }


def render(r: dict[str, Any]) -> str:
    lines, names, cc, any_ = r["lines"], r["names"], r["complexity"], r["any"]
    kernel, total = lines["kernel"], lines["total"]
    cyc_all, cyc_run = r["cycles"]["all"], r["cycles"]["runtime"]
    largest = lines["largest"][0]
    title = f"{r['root']}" + (f" ({r['label']})" if r["label"] else "")
    out = [
        f"# Code shape of prism_core: {title}",
        "",
        f"Python {r['python']}; complexity by {cc['tool']}; import graph by grimp "
        f"{r['cycles']['grimp']}. Lines: all / non-blank (comments and docstrings count).",
        "",
        "| measure | value |",
        "|---|---|",
        f"| kernel lines (all / non-blank) | {kernel['lines']} / {kernel['nonblank']} "
        f"({kernel['files']} files) |",
        f"| prism_core lines (all / non-blank) | {total['lines']} / {total['nonblank']} "
        f"({total['files']} files) |",
        f"| kernel share of lines | {kernel['lines'] / max(total['lines'], 1):.1%} |",
        f"| `len(prism_core.__all__)` | {names['all']} |",
        f"| public names of `dir(prism_core)` outside `__all__` | {names['dir_extra']} "
        f"({names['dir_extra_ops']} ops, {len(names['dir_extra_other'])} other) |",
        f"| `len(prism_core.all_ops())` | {names['all_ops']} |",
        f"| largest module | `{largest['path']}`: {largest['lines']} lines |",
        f"| functions with cc >= {cc['limit']} | {cc['count']} of {cc['total']} "
        f"({cc['share']:.1%}) |",
        f"| `Any` per kloc (non-blank) | {any_['per_kloc']:.2f} ({any_['uses']} uses) |",
    ]
    if "kernel" in any_:
        k = any_["kernel"]
        out.append(f"| `Any` per kloc in the kernel | {k['per_kloc']:.2f} ({k['uses']} uses) |")
    if "pluggy" in any_:
        p = any_["pluggy"]
        out.append(
            f"| `Any` per kloc, pluggy {p['version']} | {p['per_kloc']:.2f} ({p['uses']} uses "
            f"in {p['nonblank']} lines) |"
        )
    out += [
        f"| modules in import cycles, all imports | {cyc_all['modules_in_cycles']} "
        f"(largest SCC {cyc_all['largest_scc']}) |",
        f"| modules in import cycles, TYPE_CHECKING left out | {cyc_run['modules_in_cycles']} "
        f"(largest SCC {cyc_run['largest_scc']}) |",
        f"| private names taken across top-level parts | {r['private_imports']['count']} "
        f"({r['private_imports']['distinct']} distinct) |",
        f"| one-item list cells | {r['mutable_cells']['count']} |",
        "",
        "## Kernel",
        "",
        "| group | files | lines | non-blank | patterns |",
        "|---|---:|---:|---:|---|",
    ]
    for g in kernel["groups"]:
        patterns = ", ".join(f"`{p}`" for p in g["patterns"])
        out.append(
            f"| {g['group']} | {len(g['files'])} | {g['lines']} | {g['nonblank']} | {patterns} |"
        )
    if kernel["unmatched_patterns"]:
        skipped = ", ".join(f"`{p}`" for p in kernel["unmatched_patterns"])
        out += ["", f"Matched nothing (skipped): {skipped}."]
    out += [
        "",
        "## Lines per top-level part",
        "",
        "| part | files | lines | non-blank |",
        "|---|---:|---:|---:|",
    ]
    out += [
        f"| `{unit}` | {u['files']} | {u['lines']} | {u['nonblank']} |"
        for unit, u in lines["units"].items()
    ]
    out += ["", "## Largest modules", "", "| module | lines | non-blank |", "|---|---:|---:|"]
    out += [f"| `{m['path']}` | {m['lines']} | {m['nonblank']} |" for m in lines["largest"]]
    other = ", ".join(f"`{n}`" for n in names["dir_extra_other"]) or "none"
    out += [
        "",
        "## Top-level names",
        "",
        f"`__all__`: {names['all']} names ({names['all_unique']} distinct). `dir(prism_core)` "
        f"adds {names['dir_extra']} public names: {names['dir_extra_ops']} ops (made by the "
        f"module `__getattr__`) and {len(names['dir_extra_other'])} other globals ({other}). "
        f"`all_ops()`: {names['all_ops']} ops, {names['all_ops_top_level']} of them without "
        "a namespace.",
        "",
        f"## Functions with cyclomatic complexity >= {cc['limit']}",
        "",
        f"{cc['count']} of {cc['total']} functions and methods ({cc['share']:.1%}); the 15 "
        "most complex:",
        "",
        "| cc | function |",
        "|---:|---|",
    ]
    out += [f"| {f['cc']} | `{f['path']}:{f['line']}` {f['name']} |" for f in cc["functions"][:15]]
    for label, c in (("all imports", cyc_all), ("TYPE_CHECKING imports left out", cyc_run)):
        out += [
            "",
            f"## Import cycles, {label}",
            "",
            f"{c['modules']} modules, {c['imports']} imports. Strongly connected components "
            f"with a cycle: {len(c['sccs'])}, holding {c['modules_in_cycles']} modules.",
        ]
        for i, scc in enumerate(c["sccs"]):
            out.append(f"\n{'Largest' if i == 0 else 'Next'} ({len(scc)}): " + ", ".join(scc))
    out += [
        "",
        "## Private names taken across top-level parts",
        "",
        "| importer | takes | kind | how |",
        "|---|---|---|---|",
    ]
    out += [
        f"| `{f['importer']}:{f['line']}` | `{f['target']}.{f['name']}` | {f['kind']} | "
        f"{f['how']} |"
        for f in r["private_imports"]["imports"]
    ]
    out += ["", "## One-item list cells", "", "| cell | written at |", "|---|---|"]
    out += [
        f"| `{c['path']}:{c['line']}` {c['name']} | {', '.join(c['written_at'])} |"
        for c in r["mutable_cells"]["cells"]
    ]
    return "\n".join(out) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=REPO, help="a directory with prism_core/")
    parser.add_argument("--label", help="what the root is (a commit), for the report's title")
    parser.add_argument("--json", type=Path, help="also write every number to this file")
    parser.add_argument(
        "--complexity",
        choices=("auto", "mccabe", "ruff"),
        default="auto",
        help="what scores complexity (the two differ: compare runs of one); auto: mccabe if "
        "importable, else ruff",
    )
    args = parser.parse_args()
    result = measure(args.root.resolve(), args.label, args.complexity)
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n")
    sys.stdout.write(render(result))


if __name__ == "__main__":
    main()
