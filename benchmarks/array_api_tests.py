"""The Array API standard's own test suite (data-apis/array-api-tests) on Prism's namespace,
beside the namespaces it is measured against.

Four namespaces, each in its own pytest run of the suite with the same settings:

* ``numpy``: NumPy's own namespace (NumPy 2 is an Array API namespace), the bar for
  ``prism_core.array_api`` on NumPy arrays;
* ``prism``: ``prism_core.array_api``, automatic dispatch: the suite's arrays are NumPy's, and
  NumPy computes;
* ``array_api_compat.torch``: array-api-compat's wrapper of torch, the bar for Prism on torch;
* ``prism-torch``: ``prism_core.array_api`` with torch the process-wide backend
  (``prism_core.set_backend("torch")``, what ``use_backend("torch")`` does for a block), so that
  the suite's arrays are torch tensors and torch computes.

The suite is not on PyPI and the project does not vendor it.  Get it with the spec it reads
the signatures from (its ``array-api`` submodule), and an environment with its requirements::

    git clone --recurse-submodules https://github.com/data-apis/array-api-tests /tmp/aat
    python3.11 -m venv /tmp/aatvenv
    /tmp/aatvenv/bin/pip install torch==2.13.0 array-api-compat pytest-xdist \\
        -r /tmp/aat/requirements.txt -e . -e plugins/prism-plugin-torch

Usage::

    python benchmarks/array_api_tests.py /tmp/aat --python /tmp/aatvenv/bin/python \\
        [--namespaces numpy,prism,array_api_compat.torch,prism-torch] [--max-examples 20] \\
        [--seed 0] [--workers 2] [--suite-revision TEXT] \\
        [--output benchmarks/results/array-api-tests-DATE]

``--output PREFIX`` writes ``PREFIX.json`` (every test's outcome and each failure's message,
per namespace) and ``PREFIX.md`` (the counts, the failures grouped by cause, and the tests that
fail for Prism but pass for the namespace it is measured against); the Markdown is printed
either way.

The runs are repeatable: Hypothesis's seed is fixed (``--seed``), and the plugin
``benchmarks/array_api_tests_plugin/array_api_tests_seeding.py`` switches off Hypothesis's
example database (which would replay an earlier run's failures) and shrinking, and seeds
``random`` from each test's id (the special-case tests draw their input with
``strategy.example()``, which shuffles with it).  A test thus draws the same inputs for every
namespace, in every run, however xdist shares the tests out.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent

#: Label -> (``ARRAY_API_TESTS_MODULE``, what it is).
NAMESPACES: dict[str, tuple[str, str]] = {
    "numpy": ("numpy", "NumPy's own namespace"),
    "prism": ("prism_core.array_api", "`prism_core.array_api`, automatic dispatch"),
    "array_api_compat.torch": ("array_api_compat.torch", "array-api-compat's torch namespace"),
    "prism-torch": (
        'exec(\'import prism_core; prism_core.set_backend("torch"); '
        "import prism_core.array_api as xp')",
        '`prism_core.array_api` with `prism_core.set_backend("torch")`',
    ),
}
#: (Prism's namespace, the one it must fail no more tests than).
COMPARISONS: tuple[tuple[str, str], ...] = (
    ("prism", "numpy"),
    ("prism-torch", "array_api_compat.torch"),
)
#: The outcomes pytest-json-report gives, in the order the tables show them.
OUTCOMES = ("passed", "failed", "skipped", "xfailed", "xpassed", "error")


def cause(nodeid: str) -> str:
    """The group a test belongs to: its test module, and for the special cases the kind of
    case (``special cases (binary)``)."""
    path, _, test = nodeid.partition("::")
    module = path.rpartition("/")[2].removeprefix("test_").removesuffix(".py")
    function = test.partition("[")[0]
    if module == "special_cases":
        kind = {"test_unary": "unary", "test_binary": "binary", "test_iop": "in-place"}.get(
            function, function.removeprefix("test_").replace("_", " ")
        )
        return f"special cases ({kind})"
    return module.replace("_", " ")


def message(test: dict[str, Any]) -> str:
    """The first line of a failure's message (from the phase that failed)."""
    for phase in ("call", "setup", "teardown"):
        crash = test.get(phase, {}).get("crash")
        if crash and crash.get("message"):
            return str(crash["message"]).strip().splitlines()[0][:300]
    return ""


def run(
    label: str, suite: Path, python: str, max_examples: int, seed: int, workers: int
) -> dict[str, Any]:
    """One pytest run of the suite on the namespace ``label``: counts, outcomes, messages."""
    module = NAMESPACES[label][0]
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        command = [
            python, "-m", "pytest", "array_api_tests", "-q", "-p", "no:cacheprovider",
            "-p", "no:randomly", "-p", "array_api_tests_seeding",
            "--max-examples", str(max_examples), "--hypothesis-seed", str(seed),
            "--json-report", f"--json-report-file={report}", "--json-report-omit", "log",
        ]  # fmt: skip
        if workers > 1:
            command += ["-n", str(workers)]
        env = {
            **os.environ,
            "ARRAY_API_TESTS_MODULE": module,
            "PYTHONPATH": os.pathsep.join(
                [str(HERE / "array_api_tests_plugin"), os.environ.get("PYTHONPATH", "")]
            ).rstrip(os.pathsep),
        }
        started = time.perf_counter()
        done = subprocess.run(command, cwd=suite, env=env, capture_output=True, text=True)
        seconds = time.perf_counter() - started
        if not report.exists():
            sys.stderr.write(done.stdout[-4000:] + done.stderr[-4000:])
            raise SystemExit(f"{label}: pytest wrote no report (exit status {done.returncode})")
        data = json.loads(report.read_text())
    tests = {t["nodeid"]: t for t in data["tests"]}
    outcomes = {nodeid: t["outcome"] for nodeid, t in tests.items()}
    failures = {
        nodeid: message(t) for nodeid, t in tests.items() if t["outcome"] in ("failed", "error")
    }
    counts = Counter(outcomes.values())
    return {
        "module": module,
        "seconds": round(seconds, 1),
        "counts": {o: counts.get(o, 0) for o in OUTCOMES},
        "causes": dict(sorted(Counter(cause(n) for n in failures).items())),
        "outcomes": outcomes,
        "failures": failures,
    }


def versions(python: str) -> dict[str, str]:
    """The versions of what the runs used, as the suite's interpreter sees them."""
    script = (
        "import importlib.metadata as m, json, platform\n"
        "names = ['numpy', 'torch', 'array-api-compat', 'hypothesis', 'pytest', 'prism-core',"
        " 'prism-plugin-torch']\n"
        "out = {'python': platform.python_version()}\n"
        "for n in names:\n"
        "    try: out[n] = m.version(n)\n"
        "    except m.PackageNotFoundError: out[n] = 'not installed'\n"
        "print(json.dumps(out))\n"
    )
    done = subprocess.run([python, "-c", script], capture_output=True, text=True, check=True)
    found: dict[str, str] = json.loads(done.stdout)
    return found


def compare(runs: dict[str, Any]) -> dict[tuple[str, str], dict[str, list[str]]]:
    """For each of :data:`COMPARISONS` that ran: the tests failing for Prism's namespace that
    pass for the other, and the other way round."""
    found = {}
    for mine, bar in COMPARISONS:
        if mine in runs and bar in runs:
            ours, theirs = runs[mine]["outcomes"], runs[bar]["outcomes"]
            found[mine, bar] = {
                "failing_only_here": sorted(
                    n for n in runs[mine]["failures"] if theirs.get(n) == "passed"
                ),
                "failing_only_there": sorted(
                    n for n in runs[bar]["failures"] if ours.get(n) == "passed"
                ),
            }
    return found


def markdown(results: dict[str, Any], meta: dict[str, Any]) -> str:
    runs: dict[str, Any] = results["runs"]
    v = meta["versions"]
    lines = [
        f"# The Array API test suite on Prism's namespace ({meta['date']})",
        "",
        f"data-apis/array-api-tests {meta['suite_revision']}, at the API version each "
        f"namespace declares; Python {v['python']}, NumPy {v['numpy']}, torch {v['torch']}, "
        f"array-api-compat {v['array-api-compat']}, Hypothesis {v['hypothesis']}; "
        f"{meta['cpus']} CPUs.",
        "",
        "```bash",
        meta["command"],
        "```",
        "",
        f"Each namespace in its own run: `--max-examples {meta['max_examples']} "
        f"--hypothesis-seed {meta['seed']}`, {meta['workers']} xdist workers, no example "
        "database, `random` seeded per test (`array_api_tests_seeding`), so every namespace "
        "gets the same inputs and a second run the same counts.",
        "",
        "| namespace | `ARRAY_API_TESTS_MODULE` | passed | failed | skipped | time |",
        "|---|---|---|---|---|---|",
    ]
    for label, r in runs.items():
        c = r["counts"]
        failed = c["failed"] + c["error"]
        lines.append(
            f"| {NAMESPACES[label][1]} | `{label if label != 'prism-torch' else 'exec(...)'}` "
            f"| {c['passed']} | {failed} | {c['skipped']} | {r['seconds']:.0f} s |"
        )
    causes = sorted({c for r in runs.values() for c in r["causes"]})
    lines += [
        "",
        "## Failures by cause",
        "",
        "| cause | " + " | ".join(runs) + " |",
        "|---|" + "---|" * len(runs),
        *(
            f"| {c} | " + " | ".join(str(r["causes"].get(c, 0)) for r in runs.values()) + " |"
            for c in causes
        ),
    ]
    for (mine, bar), compared in results["comparisons"].items():
        worse, better = compared["failing_only_here"], compared["failing_only_there"]
        lines += [
            "",
            f"## `{mine}` against `{bar}`",
            "",
            f"{len(worse)} tests fail for `{mine}` and pass for `{bar}`; {len(better)} fail for "
            f"`{bar}` and pass for `{mine}`.",
        ]
        if worse:
            lines += ["", f"Failing for `{mine}` only:", ""]
            lines += [f"- `{n}`: {runs[mine]['failures'][n]}" for n in worse]
        if better:
            lines += ["", f"Failing for `{bar}` only:", ""]
            lines += [f"- `{n}`" for n in better]
    for label, r in runs.items():
        lines += ["", f"## Every failure of `{label}`", ""]
        lines += [f"- `{n}`: {m}" for n, m in sorted(r["failures"].items())] or ["None."]
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("suite", type=Path, help="a checkout of data-apis/array-api-tests")
    parser.add_argument(
        "--python", default=sys.executable, help="an interpreter with the suite's requirements"
    )
    parser.add_argument("--namespaces", default=",".join(NAMESPACES))
    parser.add_argument("--max-examples", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=2, help="xdist workers (1: none)")
    parser.add_argument(
        "--suite-revision", default=None, help="the suite's commit, when its .git is missing"
    )
    parser.add_argument("--output", default=None, help="writes PREFIX.json and PREFIX.md")
    args = parser.parse_args()

    labels = [n.strip() for n in args.namespaces.split(",") if n.strip()]
    unknown = [n for n in labels if n not in NAMESPACES]
    if unknown:
        parser.error(f"--namespaces: {', '.join(unknown)} unknown; use {', '.join(NAMESPACES)}")
    if not (args.suite / "array_api_tests").is_dir():
        parser.error(f"{args.suite} is not a checkout of array-api-tests (no array_api_tests/)")
    revision = args.suite_revision
    if revision is None:
        done = subprocess.run(
            ["git", "-C", str(args.suite), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
        )
        revision = done.stdout.strip() or "(revision unknown)"
    command = " ".join(
        ["python benchmarks/array_api_tests.py", str(args.suite), "--python", args.python]
        + (["--namespaces", args.namespaces] if args.namespaces != ",".join(NAMESPACES) else [])
        + [f"--max-examples {args.max_examples} --seed {args.seed} --workers {args.workers}"]
        + ([f"--suite-revision {args.suite_revision}"] if args.suite_revision else [])
        + ([f"--output {args.output}"] if args.output else [])
    )
    meta = {
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "suite_revision": revision,
        "command": command,
        "max_examples": args.max_examples,
        "seed": args.seed,
        "workers": args.workers,
        "cpus": os.cpu_count(),
        "versions": versions(args.python),
    }
    runs = {}
    for label in labels:
        print(f"running the suite on {label} ...", file=sys.stderr, flush=True)
        runs[label] = run(
            label, args.suite, args.python, args.max_examples, args.seed, args.workers
        )
        c = runs[label]["counts"]
        print(
            f"  {c['passed']} passed, {c['failed'] + c['error']} failed, {c['skipped']} "
            f"skipped in {runs[label]['seconds']:.0f} s",
            file=sys.stderr,
            flush=True,
        )
    results = {"meta": meta, "runs": runs, "comparisons": compare(runs)}
    text = markdown(results, meta)
    for r in runs.values():  # what the report keeps of the outcomes: those not passed
        r["not_passed"] = {n: o for n, o in sorted(r.pop("outcomes").items()) if o != "passed"}
    print(text, end="")
    if args.output:
        results["comparisons"] = {f"{a} / {b}": c for (a, b), c in results["comparisons"].items()}
        Path(args.output + ".json").write_text(json.dumps(results, indent=1) + "\n")
        Path(args.output + ".md").write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
