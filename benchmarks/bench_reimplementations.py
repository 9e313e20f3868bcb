"""What each of Prism's three re-implementations of a standard tool saves of the first call in a
fresh process, against the standard tool it replaces.

The three, as the tree before the redesign has them (commit f681c65):

* ``dataclasses``: ``prism_core/_values.py``'s ``value_type`` makes the 23 value types of the
  modules the first call imports without ``@dataclass``'s ``exec`` (each class writes its own
  ``__init__``);
* ``jsonschema``: ``prism_core/_description/cache.py`` checks each cached device document with a
  JSON Schema checker of its own instead of jsonschema;
* ``importlib.metadata``: ``prism_core/_knowledge/plugins.py`` reads the ``prism.plugins`` entry
  points and distribution versions from the ``.dist-info`` directories itself.

The changes find the modules where the tree has them: under ``prism_core/_description/`` and
``prism_core/_knowledge/`` (as above) or, after the kernel moved, ``prism_core/kernel/description/``
and ``prism_core/kernel/``.  A change the tree does not allow (a tree without ``_values.py``, or
whose validation cache checks nothing) is left out of the run and named in its report, with
``all standard``.

``--baseline DIR`` names such a tree (``prism_core/``, ``hardware/`` and ``schemas/``, and the
plugins' sources where ``DIR/plugins/*/src`` holds them), made for instance with::

    mkdir /tmp/reimpl-base && git archive f681c65 prism_core hardware schemas plugins \\
        | tar -x -C /tmp/reimpl-base

The script copies it once per case and applies one change to each copy: the standard tool in
place of one re-implementation, which is deleted (``apply_dataclasses``, ``apply_jsonschema``,
``apply_importlib_metadata`` below; each refuses a tree that lacks what it replaces).  The cases:

* ``re-implementations``: the baseline as it is;
* ``dataclasses``, ``jsonschema``, ``importlib.metadata``: one change each;
* ``all standard``: the three changes together.

Every tree is measured the same way, isolated from the working tree (whatever else is being
edited there is in none of them): a fresh interpreter imports NumPy, which is not timed, then
times ``import prism_core`` and the first ``prism_core.matmul`` of two 4x4 arrays, to its
result, with every installed plugin autoloaded and the tree's own validation cache and host-CPU
cache warm (benchmarks/bench_first_call.py measures the first call the same way).  The cases run
interleaved, one sample of each in turn, in a new order each round, so that a change in the
machine's load touches them alike.  The saving of a re-implementation is the change's minimum
less the baseline's minimum (min of ``--repeat`` samples each); the median of the per-round
differences is reported beside it.

Usage::

    python benchmarks/bench_reimplementations.py --baseline /tmp/reimpl-base [--repeat N]
        [--baseline-label TEXT] [--output benchmarks/results/reimplementations-DATE.json]

Prints a Markdown report; with ``--output`` also writes the raw numbers as JSON and the report
beside them (``.md``).
"""

from __future__ import annotations

import argparse
import ast
import compileall
import json
import os
import platform
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

FIRST_CALL = (
    "import time; import numpy as np; t = time.perf_counter(); import prism_core as p; "
    "a = np.ones((4, 4)); p.matmul(a, a); print((time.perf_counter() - t) * 1e3)"
)
#: Which of these the first call imported, per tree (a check that each change did what it says).
WATCHED = ("importlib.metadata", "email", "jsonschema", "prism_core._values")
MODULES = (
    "import sys, json; import numpy as np; import prism_core as p; "
    "a = np.ones((4, 4)); p.matmul(a, a); "
    f"print(json.dumps([m for m in {WATCHED!r} if m in sys.modules]))"
)

#: The modules whose classes ``value_type`` makes, relative to the tree.
VALUE_TYPE_MODULES = (
    "prism_core/_errors.py",
    "prism_core/_config.py",
    "prism_core/nvidia_smi.py",
    "prism_core/_contract/backend.py",
    "prism_core/_description/device.py",
    "prism_core/_description/library.py",
    "prism_core/_description/requirements.py",
    "prism_core/_knowledge/host.py",
    "prism_core/_knowledge/plugins.py",
    "prism_core/_knowledge/tuning_records.py",
)


class NotApplicable(Exception):
    """The tree lacks what a change replaces."""


def _module(tree: Path, *names: str) -> Path:
    """The first of ``names`` (paths relative to ``tree``) that the tree has: the module's place
    in the layouts before and after the kernel moved."""
    for name in names:
        if (tree / name).is_file():
            return tree / name
    raise NotApplicable(f"{tree}: none of {', '.join(names)}")


CACHE = ("prism_core/kernel/description/cache.py", "prism_core/_description/cache.py")
PLUGINS = ("prism_core/kernel/plugins.py", "prism_core/_knowledge/plugins.py")


def _replace_once(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    if text.count(old) != 1:
        raise NotApplicable(f"{path}: expected one {old.splitlines()[0]!r}")
    path.write_text(text.replace(old, new), encoding="utf-8")


def _dataclass_source(source: str, name: str) -> str:
    """``source`` with each ``@value_type`` class made by ``@dataclass`` with the same flags
    (``frozen`` by default, as ``value_type`` has it) and its hand-written ``__init__`` removed
    (``@dataclass`` writes the same one)."""
    lines = source.splitlines(keepends=True)
    drop: set[int] = set()
    replace: dict[int, str] = {}
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.ClassDef):
            continue
        for decorator in node.decorator_list:
            target = decorator.func if isinstance(decorator, ast.Call) else decorator
            if not (isinstance(target, ast.Name) and target.id == "value_type"):
                continue
            keywords = {
                k.arg: ast.literal_eval(k.value)
                for k in getattr(decorator, "keywords", [])
                if k.arg is not None
            }
            frozen = keywords.pop("frozen", True)
            flags = (["frozen=True"] if frozen else []) + [
                f"{k}={v!r}" for k, v in keywords.items()
            ]
            indent = lines[decorator.lineno - 1][: decorator.col_offset - 1]
            replace[decorator.lineno - 1] = (
                f"{indent}@dataclass" + (f"({', '.join(flags)})" if flags else "") + "\n"
            )
            [init] = [
                b for b in node.body if isinstance(b, ast.FunctionDef) and b.name == "__init__"
            ]
            start = init.lineno - 1
            if start > 0 and not lines[start - 1].strip():
                start -= 1  # with the blank line before it
            drop.update(range(start, init.end_lineno or init.lineno))
    if not replace:
        raise NotApplicable(f"{name}: no @value_type class")
    kept = [
        replace.get(i, line)
        for i, line in enumerate(lines)
        if i not in drop and line.strip() != "from prism_core._values import value_type"
    ]
    text = "".join(kept)
    found = re.search(r"^from dataclasses import (.*)$", text, re.MULTILINE)
    if found is not None:
        names = sorted({n.strip() for n in found.group(1).split(",")} | {"dataclass"})
        imported = f"from dataclasses import {', '.join(names)}"
        text = text[: found.start()] + imported + text[found.end() :]
    else:
        future = "from __future__ import annotations\n\n"
        at = text.index(future) + len(future)
        text = f"{text[:at]}from dataclasses import dataclass\n{text[at:]}"
    return text


def apply_dataclasses(tree: Path) -> None:
    """``@dataclass`` for every ``value_type`` class; ``prism_core/_values.py`` deleted."""
    if not (tree / "prism_core/_values.py").is_file():
        raise NotApplicable(f"{tree}: no prism_core/_values.py")
    for name in VALUE_TYPE_MODULES:
        path = tree / name
        path.write_text(_dataclass_source(path.read_text(encoding="utf-8"), name), "utf-8")
    # The shared default of CpuMatch.missing_features served only the hand-written __init__.
    _replace_once(
        tree / "prism_core/_knowledge/host.py",
        "#: The default of ``CpuMatch.missing_features``: read-only, so one serves every match.\n"
        "_NOTHING_MISSING: Mapping[str, frozenset[str]] = MappingProxyType({})\n\n\n",
        "",
    )
    (tree / "prism_core/_values.py").unlink()


def apply_jsonschema(tree: Path) -> None:
    """Cached documents checked by jsonschema (the validator that validates device files); the
    cache's own checker deleted."""
    path = _module(tree, *CACHE)
    package = ".".join(path.relative_to(tree).parent.parts)
    _replace_once(
        path,
        f"    from {package}.schema import _semantic_problems, device_schema, unlocated\n\n"
        "    try:\n"
        "        if not _conforms(document, device_schema()):\n",
        f"    from {package}.schema import _semantic_problems, _validator, unlocated\n\n"
        "    try:\n"
        "        if not _validator().is_valid(document):\n",
    )
    _replace_once(
        path,
        "    except (_Unverifiable, RecursionError, re.error, TypeError, ValueError):\n",
        "    except (RecursionError, re.error, TypeError, ValueError):\n",
    )
    _replace_once(
        path,
        "from collections.abc import Callable, Mapping\n",
        "from collections.abc import Mapping\n",
    )
    text = path.read_text(encoding="utf-8")
    path.write_text(text[: text.index("\n\nclass _Unverifiable(Exception):")] + "\n", "utf-8")


METADATA_STANDARD = '''def _entry_points() -> list[Any]:
    """The ``prism.plugins`` entry points of the installed distributions, sorted by name, as
    ``importlib.metadata`` finds them at each discovery: a plugin installed or removed since the
    last one is seen by the next."""
    from importlib.metadata import entry_points

    return sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda ep: ep.name)


def distribution_version(name: str) -> str | None:
    """The version of the installed distribution ``name`` (``importlib.metadata.version``), or
    ``None`` when it is not installed."""
    from importlib import metadata

    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


'''


def apply_importlib_metadata(tree: Path) -> None:
    """Entry points and distribution versions from importlib.metadata; the reader deleted."""
    path = _module(tree, *PLUGINS)
    text = path.read_text(encoding="utf-8")
    start, end = "def _entry_points() -> list[Any]:\n", "def _record_of(ep: Any) -> PluginRecord:\n"
    if text.count(start) != 1 or text.count(end) != 1 or "class _Distribution" not in text:
        raise NotApplicable(f"{path}: no entry-point reader of its own")
    path.write_text(text[: text.index(start)] + METADATA_STANDARD + text[text.index(end) :])


CHANGES: dict[str, tuple[Callable[[Path], None], ...]] = {
    "re-implementations": (),
    "dataclasses": (apply_dataclasses,),
    "jsonschema": (apply_jsonschema,),
    "importlib.metadata": (apply_importlib_metadata,),
    "all standard": (apply_dataclasses, apply_jsonschema, apply_importlib_metadata),
}
#: What each change replaces, for the report.
REPLACED = {
    "dataclasses": "prism_core/_values.py (value_type)",
    "jsonschema": "the checker of the validation cache (description/cache.py)",
    "importlib.metadata": "the reader of plugins.py",
}


def _env(tree: Path, cache: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PRISM_")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # bytecode is compiled first; may be written
    env["PRISM_CACHE_DIR"] = str(cache)
    plugins = [str(src) for src in sorted(tree.glob("plugins/*/src"))]
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(tree), *plugins, env.get("PYTHONPATH")]))
    return env


def _python(code: str, env: dict[str, str], cwd: Path) -> str:
    return subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=cwd, check=True, capture_output=True, text=True
    ).stdout.strip()


def _lines(tree: Path) -> dict[str, int]:
    """Lines of the three files the changes shrink (``_values.py``: 0 where it is deleted), each
    where the tree's layout has it."""
    names = ["prism_core/_values.py", *(n for n in (*CACHE, *PLUGINS) if (tree / n).exists())]
    return {
        n: len((tree / n).read_text().splitlines()) if (tree / n).exists() else 0 for n in names
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", type=Path, required=True, help="the tree to change")
    parser.add_argument("--baseline-label", default="", help="what the baseline tree is")
    parser.add_argument("--repeat", type=int, default=31, help="samples per case")
    parser.add_argument("--seed", type=int, default=0, help="of the order of each round")
    parser.add_argument("--output", type=Path, help="write the results as JSON (and .md)")
    args = parser.parse_args()
    baseline = args.baseline.resolve()
    if not (baseline / "prism_core").is_dir():
        parser.error(f"--baseline {args.baseline}: no prism_core/ there")

    import numpy

    work = Path(tempfile.mkdtemp(prefix="prism-reimpl-"))
    load_before = os.getloadavg()
    try:
        envs: dict[str, dict[str, str]] = {}
        lines: dict[str, dict[str, int]] = {}
        left_out: dict[str, str] = {}
        for index, (case, changes) in enumerate(CHANGES.items()):
            tree = work / f"tree{index}"
            shutil.copytree(baseline, tree, ignore=shutil.ignore_patterns("__pycache__"))
            try:
                for change in changes:
                    change(tree)
            except NotApplicable as exc:
                left_out[case] = str(exc).replace(str(tree), "the tree")
                continue
            compileall.compile_dir(str(tree), quiet=1)
            cache = work / f"cache{index}"
            cache.mkdir()
            envs[case] = _env(tree, cache)
            lines[case] = _lines(tree)
        for env in envs.values():  # warm each tree's validation and host caches, twice
            _python(FIRST_CALL, env, work)
            _python(FIRST_CALL, env, work)
        imported = {case: json.loads(_python(MODULES, env, work)) for case, env in envs.items()}
        samples: dict[str, list[float]] = {case: [] for case in envs}
        order = list(envs)
        rng = random.Random(args.seed)
        for _ in range(args.repeat):
            rng.shuffle(order)
            for case in order:
                samples[case].append(float(_python(FIRST_CALL, envs[case], work)))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    load_after = os.getloadavg()

    base = samples["re-implementations"]
    results: dict[str, Any] = {
        "machine": {
            "python": platform.python_version(),
            "numpy": numpy.__version__,
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "when": time.strftime("%Y-%m-%d %H:%M"),
            "load_average_1min": [round(load_before[0], 2), round(load_after[0], 2)],
        },
        "repeat": args.repeat,
        "baseline": args.baseline_label or str(args.baseline),
        "left_out": left_out,
        "cases": {
            case: {
                "min_ms": round(min(s), 2),
                "median_ms": round(statistics.median(s), 2),
                "imports": imported[case],
                "lines": lines[case],
                "samples_ms": [round(x, 2) for x in s],
            }
            for case, s in samples.items()
        },
        "savings": {
            case: {
                "replaces": REPLACED.get(case, "all three"),
                "min_ms": round(min(s) - min(base), 2),
                "median_of_round_differences_ms": round(
                    statistics.median(a - b for a, b in zip(s, base, strict=True)), 2
                ),
            }
            for case, s in samples.items()
            if case != "re-implementations"
        },
    }
    report = _markdown(results)
    print(report)
    if args.output:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(json.dumps(results, indent=2) + "\n")
        args.output.with_suffix(".md").write_text(report + "\n")
    return 0


def _markdown(results: dict[str, Any]) -> str:
    m = results["machine"]
    lines = [
        f"# What the re-implementations save of the first call ({m['when']}, Python "
        f"{m['python']}, NumPy {m['numpy']}, {m['cpus']} CPUs, {results['repeat']} samples per "
        f"case, load average {m['load_average_1min'][0]} before, "
        f"{m['load_average_1min'][1]} after)",
        "",
        "The first call in a fresh process (`import prism_core` and one `matmul` of 4x4 arrays, "
        "after NumPy's import, every plugin autoloaded, caches warm), in a copy of the baseline "
        "tree with one re-implementation replaced by the standard tool.",
        "",
        "| tree | min | median | imports on the first call (of: " + ", ".join(WATCHED) + ") |",
        "|---|---|---|---|",
    ]
    for case, c in results["cases"].items():
        imports = ", ".join(c["imports"]) or "none"
        lines.append(f"| {case} | {c['min_ms']} ms | {c['median_ms']} ms | {imports} |")
    lines += [
        "",
        "What each re-implementation saves: the standard tool's time less the re-implementation's "
        "(positive: the re-implementation is faster).",
        "",
        "| standard tool | in place of | saving, min - min | saving, median of the per-round "
        "differences |",
        "|---|---|---|---|",
    ]
    for case, s in results["savings"].items():
        lines.append(
            f"| {case} | {s['replaces']} | {s['min_ms']} ms | "
            f"{s['median_of_round_differences_ms']} ms |"
        )
    files = list(next(iter(results["cases"].values()))["lines"])
    lines += ["", "Lines of the files the changes shrink (0: deleted):", ""]
    lines += ["| tree | " + " | ".join(f"`{f}`" for f in files) + " |"]
    lines.append("|---" * (len(files) + 1) + "|")
    for case, c in results["cases"].items():
        lines.append(f"| {case} | " + " | ".join(str(c["lines"][f]) for f in files) + " |")
    for case, why in results.get("left_out", {}).items():
        lines += ["", f"Left out, not applicable to this tree: {case} ({why})."]
    lines += ["", f"Baseline: {results['baseline']}."]
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
