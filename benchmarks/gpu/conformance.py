"""Prism's conformance suite on the GPU, at most ``--seconds`` per backend: the ``torch``
backend with its arrays on CUDA (inside a scope naming the GPU, as the torch plugin's
``test_conformance_on_the_gpu`` runs it) and the ``cuda`` backend (CuPy).  Writes the counts
and every failure to OUTPUT (JSON); a backend that cannot use a GPU here is recorded with its
reason.  Without any GPU it prints ``skipped: ...``
and exits 0 (``benchmarks/gpu/run.py --dry-run``).

Usage::

    python benchmarks/gpu/conformance.py --output FILE.json [--seconds S] [--ops linspace,sum]
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
from pathlib import Path
from typing import Any

import prism_core
from prism_core.testing import ConformanceReport, conformance_checks


def check(name: str, seconds: float, ops: frozenset[str] = frozenset()) -> dict[str, Any]:
    """The suite's checks on backend ``name`` one by one, for at most ``seconds``, of the ops
    named in ``ops`` (every op when empty); the slowest subjects are listed (CuPy compiles a
    kernel per op, dtype and axis on first use)."""
    report = ConformanceReport(name)
    # Round-robin over the subjects (an op's checks in turn): a run cut short by the time
    # limit has checked every op at least once rather than the first ops in full.
    by_subject: dict[str, list[Any]] = {}
    for c in conformance_checks(prism_core.extending.plugins().backend(name)):
        if ops and c.subject.removeprefix(f"{name}.") not in ops:
            continue
        by_subject.setdefault(c.subject, []).append(c)
    checks = [c for row in itertools.zip_longest(*by_subject.values()) for c in row if c]
    began = time.perf_counter()
    spent: dict[str, float] = {}
    for done, c in enumerate(checks):
        if time.perf_counter() - began > seconds:
            print(f"{name}: stopped after {seconds:.0f} s, {done} of {len(checks)} checks run")
            break
        start = time.perf_counter()
        report.results.append(c.run())
        subject = report.results[-1].subject
        spent[subject] = spent.get(subject, 0.0) + time.perf_counter() - start
    return {
        "checks": len(checks),
        "run": len(report.results),
        "passed": len(report.passed),
        "failed": len(report.failed),
        "skipped": len(report.skipped),
        "seconds": round(time.perf_counter() - began, 1),
        "failures": [f"{r.name}: {r.detail}" for r in report.failed],
        "slowest": {k: round(v, 2) for k, v in sorted(spent.items(), key=lambda kv: -kv[1])[:15]},
        # The variants whose values were compared with the reference at least once.
        "subjects_with_values": len({r.subject for r in report.passed if r.check == "values"}),
        # The variants (one per op), and those checked at least once (the round-robin's aim).
        "subjects": len(by_subject),
        "subjects_run": len({r.subject for r in report.results}),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, required=True)
    parser.add_argument("--seconds", type=float, default=120, help="at most, per backend")
    parser.add_argument("--ops", default="", help="only these ops, comma-separated")
    args = parser.parse_args()
    ops = frozenset(filter(None, args.ops.split(",")))

    found: dict[str, Any] = {"backends": {}, "unavailable": {}}
    try:
        from prism_plugin_torch.backend import cuda_unavailable
    except ImportError as exc:
        why: str | None = f"prism-plugin-torch is not installed ({exc})"
    else:
        why = cuda_unavailable()
    if why is None:
        import torch

        name = torch.cuda.get_device_name(0)
        gpu = prism_core.hardware.match_detected_device(product_name=name)
        if gpu is None:
            found["unavailable"]["torch"] = f"no device description matches the GPU {name!r}"
        else:
            with prism_core.device(gpu, simulate=True):  # the variants run on the real GPU
                found["backends"]["torch (CUDA)"] = check("torch", args.seconds, ops)
    else:
        found["unavailable"]["torch"] = why
    try:
        state = prism_core.extending.plugins().backend("cuda").availability()
    except (
        prism_core.extending.PluginError
    ) as exc:  # prism-plugin-cuda not installed (or not loaded)
        found["unavailable"]["cuda"] = str(exc)
    else:
        if state:
            found["backends"]["cuda (CuPy)"] = check("cuda", args.seconds, ops)
        else:
            found["unavailable"]["cuda"] = state.reason
    if not found["backends"]:
        reasons = "; ".join(f"{k}: {v}" for k, v in found["unavailable"].items())
        print(f"skipped: no GPU that a backend can use ({reasons})")
        return 0
    args.output.write_text(json.dumps(found, indent=1) + "\n")
    for backend, c in found["backends"].items():
        print(
            f"{backend}: {c['run']} of {c['checks']} checks run in {c['seconds']} s: "
            f"{c['passed']} passed, {c['failed']} failed, {c['skipped']} skipped; slowest: "
            f"{c['slowest']}"
        )
        for line in c["failures"][:40]:
            print("  FAILED", line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
