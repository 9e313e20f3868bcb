"""Start-up and validation speed of Prism's device library.

Measures, in one run so that the numbers can be compared side by side:

* ``import prism_core`` (in a fresh interpreter, timed inside it) and what it imports;
* ``prism devices`` and ``prism validate hardware/``, cold (empty validation cache) and warm,
  as whole commands, next to ``python -c pass`` (the interpreter's own start-up);
* loading and validating each shipped device file in-process, and a cache hit;
* hostile inputs: how long the loader takes to reach its located error.

Usage::

    python benchmarks/bench_startup.py [--repeat N] [--output benchmarks/results/NAME.json]

Prints a Markdown report; with ``--output`` also writes the raw numbers as JSON.  Timings are
medians of N runs; on a shared machine compare ratios within one run, not across runs.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
HARDWARE = REPO / "hardware"


def _run(cmd: list[str], env: dict[str, str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t0


def _median_ms(samples: list[float]) -> float:
    return round(statistics.median(samples) * 1000, 2)


def bench_import(repeat: int, env: dict[str, str]) -> dict[str, Any]:
    code = (
        "import time, sys; t = time.perf_counter(); import prism_core; "
        "dt = time.perf_counter() - t; "
        "heavy = [m for m in ('yaml', 'jsonschema', 'numpy', 'packaging', 'platformdirs') "
        "if m in sys.modules]; print(dt, ','.join(heavy))"
    )
    samples = []
    heavy = ""
    for _ in range(repeat):
        out = subprocess.run(
            [sys.executable, "-c", code], env=env, check=True, capture_output=True, text=True
        ).stdout.split()
        samples.append(float(out[0]))
        heavy = out[1] if len(out) > 1 else ""
    return {"import_prism_core_ms": _median_ms(samples), "heavy_modules_imported": heavy or "none"}


def bench_commands(repeat: int, env: dict[str, str]) -> dict[str, Any]:
    prism = [sys.executable, "-m", "prism_core"]
    results: dict[str, Any] = {}
    results["python_-c_pass_ms"] = _median_ms(
        [_run([sys.executable, "-c", "pass"], env) for _ in range(repeat)]
    )
    for name, args in (
        ("devices", ["devices"]),
        ("validate_hardware", ["validate", str(HARDWARE)]),
    ):
        cold = []
        for _ in range(repeat):
            cache = tempfile.mkdtemp(prefix="prism-bench-cold-")
            try:
                cold.append(_run([*prism, *args], {**env, "PRISM_CACHE_DIR": cache}))
            finally:
                shutil.rmtree(cache, ignore_errors=True)
        warm_cache = tempfile.mkdtemp(prefix="prism-bench-warm-")
        try:
            warm_env = {**env, "PRISM_CACHE_DIR": warm_cache}
            _run([*prism, *args], warm_env)  # fill the cache
            warm = [_run([*prism, *args], warm_env) for _ in range(repeat)]
        finally:
            shutil.rmtree(warm_cache, ignore_errors=True)
        results[f"prism_{name}_cold_ms"] = _median_ms(cold)
        results[f"prism_{name}_warm_ms"] = _median_ms(warm)
    return results


def _time_in_process(fn: Callable[[], object], repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


def bench_per_file(repeat: int) -> dict[str, Any]:
    from prism_core.kernel.description.cache import ValidationCache, digest
    from prism_core.kernel.description.schema import device_schema_bytes, validate_parsed
    from prism_core.kernel.description.yaml_loader import parse_yaml

    files = sorted(HARDWARE.rglob("*.yaml"))
    # Warm the validator (schema compilation happens once per process).
    parsed0, _ = parse_yaml(files[0].read_bytes(), "x")
    assert parsed0 is not None
    validate_parsed(parsed0, "x")

    parse_times, validate_times, total_times = [], [], []
    for f in files:
        raw = f.read_bytes()
        parse_times.append(_time_in_process(partial(parse_yaml, raw, "x"), repeat))
        parsed, _ = parse_yaml(raw, "x")
        assert parsed is not None
        validate_times.append(_time_in_process(partial(validate_parsed, parsed, "x"), repeat))
        total_times.append(parse_times[-1] + validate_times[-1])

    cache = ValidationCache(None, device_schema_bytes())
    raw = files[0].read_bytes()
    cache.put(digest(raw), raw, parsed0.value)

    def hit_once() -> object:
        data = files[0].read_bytes()
        return cache.get(digest(data), data)

    assert hit_once() is not None
    hit = _time_in_process(hit_once, repeat * 20)
    return {
        "files": len(files),
        "parse_median_ms": round(statistics.median(parse_times) * 1000, 3),
        "validate_median_ms": round(statistics.median(validate_times) * 1000, 3),
        "load_and_validate_median_ms": round(statistics.median(total_times) * 1000, 3),
        "load_and_validate_max_ms": round(max(total_times) * 1000, 3),
        "cache_hit_read_hash_check_ms": round(hit * 1000, 4),
    }


def bench_hostile(repeat: int) -> dict[str, Any]:
    from prism_core.kernel.description.yaml_loader import MAX_BYTES, parse_yaml

    bomb = ["a: &a [x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 9):
        prev, cur = chr(97 + i - 1), chr(97 + i)
        bomb.append(f"{cur}: &{cur} [" + ", ".join([f"*{prev}"] * 9) + "]")
    cases: dict[str, bytes] = {
        "alias_bomb": ("\n".join(bomb) + "\n").encode(),
        "deep_flow_nesting_100k": b"a: " + b"[" * 100_000 + b"]" * 100_000,
        "deep_block_nesting": ("a:\n" + "".join("  " * i + "k:\n" for i in range(1, 600))).encode(),
        "one_mib_of_keys": "".join(f"k{i}: {i}\n" for i in range(200_000)).encode()[:MAX_BYTES],
        "one_mib_flow_list": b"a: [" + b"1," * (MAX_BYTES // 2 - 10) + b"1]",
        "three_mb_string": b"a: '" + b"x" * 3_000_000 + b"'",
        "binary_garbage": os.urandom(MAX_BYTES),
        "python_tag": b"a: !!python/object/apply:os.system ['echo hi']\n",
    }
    out = {}
    for name, data in cases.items():
        out[f"{name}_ms"] = round(
            _time_in_process(partial(parse_yaml, data, "x"), repeat) * 1000, 2
        )
        _, problems = parse_yaml(data, "x")
        assert problems, name
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=15, help="runs per measurement (median)")
    parser.add_argument("--output", type=Path, help="write the raw results as JSON")
    args = parser.parse_args()

    env = {k: v for k, v in os.environ.items() if not k.startswith("PRISM_")}
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    # Measure as installed code runs: from bytecode, not recompiling the sources every start
    # (some shells set PYTHONDONTWRITEBYTECODE; the first run below writes __pycache__).
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    subprocess.run(
        [sys.executable, "-m", "prism_core", "devices"],
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    results: dict[str, Any] = {
        "machine": {
            "python": platform.python_version(),
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "when": time.strftime("%Y-%m-%d"),
        },
        "repeat": args.repeat,
    }
    results["import"] = bench_import(args.repeat, env)
    results["commands"] = bench_commands(args.repeat, env)
    results["per_file"] = bench_per_file(args.repeat)
    results["hostile"] = bench_hostile(max(3, args.repeat // 5))

    print(
        f"# Prism start-up benchmark ({results['machine']['when']}, Python "
        f"{results['machine']['python']}, {results['machine']['cpus']} CPUs, median of "
        f"{args.repeat})\n"
    )
    for section in ("import", "commands", "per_file", "hostile"):
        print(f"## {section}\n\n| measurement | value |\n|---|---|")
        for key, value in results[section].items():
            print(f"| {key} | {value} |")
        print()
    base = results["commands"]["python_-c_pass_ms"]
    print("## ratios to `python -c pass`\n\n| command | ratio |\n|---|---|")
    for key, value in results["commands"].items():
        if key.startswith("prism_"):
            print(f"| {key} | {value / base:.2f} |")
    if args.output:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
