"""How fast ``prism lint`` reads real code: lines per second over installed packages' source.

For each target (a directory of Python source: by default the installed ``scipy.signal`` and
``networkx``, real scientific code not written here) every ``*.py`` file is read into memory
once, then timed, round by round and interleaved so that a burst of load on a shared machine
touches every case alike:

* **parse**: ``ast.parse`` of every file: the floor any linter that reads Python's syntax tree
  pays (the same parser the lint uses);
* **lint**: ``prism_core.lint.lint_source`` of every file: parsing, both passes of the checker
  (scopes, bindings, the inference of Prism arrays, the rules), ``# noqa`` and the codes in
  force;
* **fix**: ``prism_core.lint.fix_source`` of a generated module written with Prism's ops and
  Python operators (``--fix-functions`` functions of six operators each): finding, rewriting and
  re-parsing until nothing is left to fix.

and once per round, ``prism lint DIR`` as a subprocess (**command**): the wall time a user
waits, reading the files from disk, starting the interpreter and importing the lint included.
Each case reports the minimum and the median over rounds, lines per second at the minimum, and
the ratio of lint to parse (how much the checker costs on top of the parser).

Usage::

    python benchmarks/bench_lint.py [--targets scipy.signal,networkx] [--repeats N]
        [--output benchmarks/results/lint-DATE]

writes PREFIX.json and PREFIX.md (default: print the Markdown report only).
"""

from __future__ import annotations

import argparse
import ast
import importlib.metadata
import importlib.util
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from prism_core.lint import LintConfig, fix_source, lint_source
from prism_core.lint.runner import iter_python_files, read_source

FIX_FUNCTION = """
def step_{i}(v, w):
    x = prism.exp(v)
    y = prism.multiply(w, 0.5)
    z = (x - y) / (x + 1.0)
    return z * z @ x ** 2
"""


def target_dir(name: str) -> Path:
    """The source directory of an installed package or subpackage (``scipy.signal``)."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit(f"{name}: not an installed package")
    return Path(next(iter(spec.submodule_search_locations)))


def load(directory: Path) -> list[tuple[Path, str]]:
    return [(p, read_source(p)[0]) for p in iter_python_files([directory], LintConfig())]


def lines_of(sources: list[tuple[Path, str]]) -> int:
    return sum(text.count("\n") + 1 for _, text in sources)


def time_parse(sources: list[tuple[Path, str]]) -> float:
    start = time.perf_counter()
    for path, text in sources:
        ast.parse(text, filename=str(path))
    return time.perf_counter() - start


def time_lint(sources: list[tuple[Path, str]], config: LintConfig) -> tuple[float, int]:
    found = 0
    start = time.perf_counter()
    for path, text in sources:
        found += len(lint_source(text, path, config=config))
    return time.perf_counter() - start, found


def time_fix(text: str, config: LintConfig) -> tuple[float, int]:
    start = time.perf_counter()
    result = fix_source(text, config=config)
    return time.perf_counter() - start, result.fixes


def time_command(directory: Path) -> float:
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "prism_core", "lint", str(directory)],
        capture_output=True,
        check=False,
        timeout=600,
    )
    return time.perf_counter() - start


def summary(times: list[float], lines: int) -> dict[str, float]:
    best = min(times)
    return {
        "min_s": best,
        "median_s": statistics.median(times),
        "lines_per_s_at_min": lines / best,
    }


def report_md(data: dict[str, Any]) -> str:
    host = data["host"]
    out = [
        f"# prism lint: lines per second ({data['date']}, Python {host['python']}, "
        f"{host['cpus']} CPUs, {data['repeats']} rounds, load average {host['load_before']} "
        f"before, {host['load_after']} after)",
        "",
        "| target | files | lines | findings | parse (min / median) | lint (min / median) | "
        "lint lines/s | lint / parse | `prism lint DIR` (min / median) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for t in data["targets"]:
        p, li, c = t["parse"], t["lint"], t["command"]
        out.append(
            f"| {t['name']} {t['version']} | {t['files']} | {t['lines']:,} | {t['findings']:,} | "
            f"{p['min_s'] * 1e3:.0f} / {p['median_s'] * 1e3:.0f} ms | "
            f"{li['min_s'] * 1e3:.0f} / {li['median_s'] * 1e3:.0f} ms | "
            f"{li['lines_per_s_at_min']:,.0f} | {li['min_s'] / p['min_s']:.2f} | "
            f"{c['min_s'] * 1e3:.0f} / {c['median_s'] * 1e3:.0f} ms |"
        )
    f = data["fix"]
    out += [
        "",
        f"`--fix` of a generated module of {f['lines']:,} lines ({f['fixes']:,} rewrites): "
        f"{f['min_s'] * 1e3:.0f} ms min, {f['median_s'] * 1e3:.0f} ms median "
        f"({f['lines_per_s_at_min']:,.0f} lines/s).",
        "",
        "parse: `ast.parse` of every file (in memory); lint: `lint_source` of every file (in "
        "memory, every code); `prism lint DIR`: the command as a subprocess (reading the files, "
        "starting Python, importing the lint).",
        "",
    ]
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--targets", default="scipy.signal,networkx")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--fix-functions", type=int, default=400)
    parser.add_argument("--output", help="write PREFIX.json and PREFIX.md")
    args = parser.parse_args()
    config = LintConfig()
    load_before = os.getloadavg()[0] if hasattr(os, "getloadavg") else None

    targets = []
    for name in args.targets.split(","):
        directory = target_dir(name.strip())
        sources = load(directory)
        top = name.strip().split(".", 1)[0]
        try:
            version = importlib.metadata.version(top)
        except importlib.metadata.PackageNotFoundError:
            version = "?"
        targets.append({"name": name, "version": version, "dir": directory, "sources": sources})
    fix_text = "import prism_core as prism\n" + "".join(
        FIX_FUNCTION.format(i=i) for i in range(args.fix_functions)
    )

    times: dict[str, dict[str, list[float]]] = {
        t["name"]: {"parse": [], "lint": [], "command": []} for t in targets
    }
    fix_times: list[float] = []
    findings: dict[str, int] = {}
    fixes = 0
    for round_ in range(args.repeats):
        for t in targets:
            name, sources = t["name"], t["sources"]
            # Alternate which goes first, so that neither always finds the caches warm.
            if round_ % 2:
                elapsed, findings[name] = time_lint(sources, config)
                times[name]["lint"].append(elapsed)
                times[name]["parse"].append(time_parse(sources))
            else:
                times[name]["parse"].append(time_parse(sources))
                elapsed, findings[name] = time_lint(sources, config)
                times[name]["lint"].append(elapsed)
            times[name]["command"].append(time_command(t["dir"]))
        elapsed, fixes = time_fix(fix_text, config)
        fix_times.append(elapsed)
        print(f"round {round_ + 1}/{args.repeats} done", file=sys.stderr, flush=True)

    data: dict[str, Any] = {
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "repeats": args.repeats,
        "host": {
            "python": platform.python_version(),
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "load_before": None if load_before is None else round(load_before, 2),
            "load_after": round(os.getloadavg()[0], 2) if hasattr(os, "getloadavg") else None,
        },
        "targets": [],
        "fix": {
            "lines": fix_text.count("\n") + 1,
            "fixes": fixes,
            "times_s": fix_times,
            **summary(fix_times, fix_text.count("\n") + 1),
        },
    }
    for t in targets:
        name, sources = t["name"], t["sources"]
        lines = lines_of(sources)
        data["targets"].append(
            {
                "name": name,
                "version": t["version"],
                "files": len(sources),
                "lines": lines,
                "findings": findings[name],
                **{
                    case: {"times_s": times[name][case], **summary(times[name][case], lines)}
                    for case in ("parse", "lint", "command")
                },
            }
        )
    md = report_md(data)
    print(md)
    if args.output:
        Path(args.output + ".json").write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
        Path(args.output + ".md").write_text(md, encoding="utf-8")


if __name__ == "__main__":
    main()
