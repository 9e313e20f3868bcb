"""Smith-Waterman through Prism against the fastest direct parasail call, case by case.

For each case (DNA: match 2, mismatch -3, gaps 5 and 2; proteins: BLOSUM62, gaps 11 and 1;
short and long sequences, unrelated ones and near-identical ones whose scores overflow 8-bit
lanes, and 16-bit ones), every parasail function that can compute it is called directly from
parasail's Python module, on the strings:

* one pair: ``sw_{striped,scan,diag}_{8,16,32,sat}`` and
  ``sw_{striped,scan}_profile_{8,16,32,sat}`` with the query profile built beforehand (not
  timed);
* a batch (one query against many targets): the same functions in a loop over the targets,
  the profile built once beforehand.

A function counts only where it gives the exact score (not saturated, equal to
``sw_scan_64``'s) for the pair or every target.  Each is called twice; those within 1.25x of
the quickest, and Prism (``prism_genomics.sw_align`` or ``sw_align_batch`` on codes encoded
once, automatic dispatch, warm), are then timed in interleaved rounds
(``prism_core._tuning.tuner.measure``), the minimum kept.  Reported per case: the fastest
direct function, ratio = its time / Prism's (>= 1: Prism is as fast), the variant Prism
chose and the lane widths its parasail kernels ran (seen by wrapping the plugin's bound C
functions for one untimed call; ``sat`` is parasail's own 8-bit kernel that redoes a
saturated alignment in 16 bits, then 32).

Usage::

    python benchmarks/bench_sw_parasail.py --output PREFIX --label before|after [--quick]

``--label`` keeps each run under its name in ``PREFIX.json`` (runs of other labels stay), and
``PREFIX.md`` shows every run, and the ratios side by side.
"""

from __future__ import annotations

import argparse
import collections
import functools
import json
import os
import platform
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

AMINO_ACIDS = "ARNDCQEGHILKMFPSTWYV"


@dataclass(frozen=True)
class Case:
    """One benchmark case: a pair (``targets == 1`` and ``batch`` false) or a batch."""

    name: str
    scoring: str  # "dna" or "protein"
    query: int
    target: int
    #: Identity of each target with the query (substitutions only); ``None``: unrelated.
    identity: float | None
    targets: int = 1
    batch: bool = False


CASES = (
    Case("DNA pair 100 x 100, unrelated", "dna", 100, 100, None),
    Case("DNA pair 1,000 x 10,000, unrelated", "dna", 1000, 10_000, None),
    Case("DNA pair 300 x 300, 90% identical", "dna", 300, 300, 0.9),
    Case("DNA pair 1,000 x 1,000, 90% identical", "dna", 1000, 1000, 0.9),
    Case("DNA pair 20,000 x 20,000, identical", "dna", 20_000, 20_000, 1.0),
    Case("DNA pair 34,000 x 34,000, identical", "dna", 34_000, 34_000, 1.0),
    Case("protein pair 300 x 300, unrelated", "protein", 300, 300, None),
    Case("protein pair 1,000 x 5,000, unrelated", "protein", 1000, 5000, None),
    Case("protein pair 300 x 300, 90% identical", "protein", 300, 300, 0.9),
    Case("protein pair 1,000 x 1,000, 90% identical", "protein", 1000, 1000, 0.9),
    Case("protein pair 7,000 x 7,000, identical", "protein", 7000, 7000, 1.0),
    Case("protein pair 13,000 x 13,000, identical", "protein", 13_000, 13_000, 1.0),
    Case("DNA batch 1,000 x 16 of 1,000, unrelated", "dna", 1000, 1000, None, 16, True),
    Case("DNA batch 1,000 x 16 of 1,000, 90% identical", "dna", 1000, 1000, 0.9, 16, True),
    Case("protein batch 300 x 128 of 300, unrelated", "protein", 300, 300, None, 128, True),
    Case("protein batch 300 x 128 of 300, 90% identical", "protein", 300, 300, 0.9, 128,
         True),
    Case("protein batch 13,000 x 1 of 13,000, identical", "protein", 13_000, 13_000, 1.0, 1,
         True),
)  # fmt: skip
#: ``--quick``: the cases that take under a second each.
QUICK = tuple(c for c in CASES if c.query * c.target * c.targets <= 10**7)


def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def _sequences(case: Case, rng: Any) -> tuple[str, list[str]]:
    letters = "ACGT" if case.scoring == "dna" else AMINO_ACIDS
    pool = list(letters)

    def random(n: int) -> str:
        return "".join(rng.choice(pool, n))

    query = random(case.query)
    if case.identity is None:
        return query, [random(case.target) for _ in range(case.targets)]
    targets = []
    for _ in range(case.targets):
        out = list(query[: case.target])
        for i in range(len(out)):
            if rng.random() >= case.identity:
                out[i] = rng.choice([c for c in pool if c != out[i]])
        targets.append("".join(out))
    return query, targets


def _lanes_run(isa: str, call: Callable[[], Any]) -> str:
    """The lane widths and methods of the plugin's C functions that ran during ``call()``,
    with how many times (``8 striped`` or ``8 striped x 3, 16 scan x 13``): each bound
    alignment function is wrapped for the one call."""
    from prism_plugin_parasail import kernels, rule

    bound = kernels._kernels_of(rule.ISAS[isa])
    seen: collections.Counter[str] = collections.Counter()
    saved = []
    for table in vars(bound).values():
        for key, fn in list(table.items()):
            if not isinstance(key, tuple):
                continue  # a profile constructor, keyed by its lane alone
            saved.append((table, key, fn))

            def spy(*args: Any, _fn: Any = fn, _lane: str = f"{key[1]} {key[0]}") -> Any:
                seen[_lane] += 1
                return _fn(*args)

            table[key] = spy
    try:
        call()
    finally:
        for table, key, fn in saved:
            table[key] = fn
    return ", ".join(f"{lane} x {n}" if n > 1 else lane for lane, n in seen.items())


def _loop(fn: Callable[..., Any], first: Any, targets: list[str], *rest: Any) -> Callable[[], Any]:
    """``fn(first, target, *rest)`` for each target: a batch called directly (the arguments
    written out, as a caller would)."""
    if len(rest) == 2:
        o, e = rest
        return lambda: [fn(first, t, o, e) for t in targets]
    o, e, matrix = rest
    return lambda: [fn(first, t, o, e, matrix) for t in targets]


def run_case(case: Case, budget: float, rng: Any) -> dict[str, Any]:
    import numpy as np
    import parasail  # type: ignore[import-untyped, unused-ignore]
    import prism_genomics
    from prism_genomics import BLOSUM62, PROTEIN, Scoring, encode

    import prism_core as prism
    from prism_core._tuning.candidates import Runner
    from prism_core._tuning.tuner import measure

    if case.scoring == "dna":
        scoring, alphabet = Scoring.match_mismatch(), None
        matrix = parasail.matrix_create("ACGT", 2, -3)
    else:
        scoring, alphabet = BLOSUM62, PROTEIN
        matrix = parasail.blosum62
    o, e = scoring.gap_open, scoring.gap_extend
    q_text, t_texts = _sequences(case, rng)
    q = encode(q_text) if alphabet is None else encode(q_text, alphabet)
    codes = [encode(t) if alphabet is None else encode(t, alphabet) for t in t_texts]
    exact = [parasail.sw_scan_64(q_text, t, o, e, matrix).score for t in t_texts]

    # A pair's contenders return parasail's result, a batch's a list of them.
    contenders: dict[str, Callable[[], Any]] = {}
    for method in ("striped", "scan", "diag"):
        for width in ("8", "16", "32", "sat"):
            fn = getattr(parasail, f"sw_{method}_{width}")
            if case.batch:
                contenders[f"sw_{method}_{width} loop"] = _loop(fn, q_text, t_texts, o, e, matrix)
            else:
                contenders[f"sw_{method}_{width}"] = functools.partial(
                    fn, q_text, t_texts[0], o, e, matrix
                )
    for method in ("striped", "scan"):
        for width in ("8", "16", "32", "sat"):
            profile = getattr(parasail, f"profile_create_{width}")(q_text, matrix)
            fn = getattr(parasail, f"sw_{method}_profile_{width}")
            label = f"sw_{method}_profile_{width} (profile built beforehand)"
            if case.batch:
                contenders[label + " loop"] = _loop(fn, profile, t_texts, o, e)
            else:
                contenders[label] = functools.partial(fn, profile, t_texts[0], o, e)
    exact_ones: dict[str, float] = {}
    for label, call in contenders.items():
        got = call() if case.batch else [call()]
        if all(not r.saturated and r.score == s for r, s in zip(got, exact, strict=True)):
            began = time.perf_counter()
            call()
            first = time.perf_counter() - began
            began = time.perf_counter()
            call()
            exact_ones[label] = min(first, time.perf_counter() - began)
    quickest = min(exact_ones.values())
    shortlist = [k for k, s in exact_ones.items() if s <= 1.25 * quickest]

    if case.batch:
        packed = np.concatenate(codes)
        offsets = np.concatenate([[0], np.cumsum([len(c) for c in codes])]).astype(np.int64)
        args: tuple[Any, ...] = (q, packed, offsets, scoring.matrix, o, e)
        op, prism_call = "genomics.sw_align_batch", prism_genomics.sw_align_batch
        got = prism_call(*args)
        assert [int(s) for s in got.scores] == exact, (case.name, got.scores, exact)
    else:
        args = (q, codes[0], scoring.matrix, o, e, False)
        op, prism_call = "genomics.sw_align", prism_genomics.sw_align
        assert prism_call(*args).score == exact[0], case.name
    chosen = prism.explain(op, *args).chosen or "-"
    prism_label = f"prism.{op}"
    runners = [Runner(k, "parasail", None, contenders[k]) for k in shortlist]
    runners.append(Runner(prism_label, "", None, lambda: prism_call(*args)))
    load_before = _load()
    measured = {r.variant: r for r in measure(runners, budget_s=budget, min_rounds=5,
                                               max_rounds=50)}  # fmt: skip
    isa = chosen.removesuffix(".threads").rsplit(".", 1)[-1]
    lanes = _lanes_run(isa, lambda: prism_call(*args)) if chosen.startswith("parasail.") else "-"
    direct = {k: measured[k].seconds for k in shortlist}
    fastest = min(direct, key=lambda k: direct[k])
    prism_s = measured[prism_label].seconds
    return {
        "case": case.name,
        "scoring": case.scoring,
        "query": case.query,
        "target": case.target,
        "targets": case.targets,
        "batch": case.batch,
        "identity": case.identity,
        "cells": case.query * case.target * case.targets,
        "score": max(exact),
        "exact_direct_single_shot_seconds": exact_ones,
        "seconds": {**direct, prism_label: prism_s},
        "rounds": {k: len(m.samples) for k, m in measured.items()},
        "fastest_direct": fastest,
        "prism_variant": chosen,
        "prism_lanes": lanes,
        "ratio": direct[fastest] / prism_s,
        "load_before": load_before,
        "load_after": _load(),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="only the cases under 10**7 cells")
    parser.add_argument("--budget", type=float, default=2.0, help="seconds per case")
    parser.add_argument("--output", default=None, help="write PREFIX.json and PREFIX.md")
    parser.add_argument("--label", default="run", help="the run's name in PREFIX.json")
    parser.add_argument("--cases", default=None, help="only cases whose name has this text")
    args = parser.parse_args()
    os.environ["PRISM_CACHE_DIR"] = tempfile.mkdtemp(prefix="prism-bench-sw-")

    import numpy as np
    import parasail

    import prism_core as prism

    cases = QUICK if args.quick else CASES
    if args.cases:
        cases = tuple(c for c in cases if args.cases in c.name)
    rng = np.random.default_rng(27)
    record: dict[str, Any] = {
        "host": {
            "python": platform.python_version(),
            "machine": platform.machine(),
            "cpus": len(os.sched_getaffinity(0)),
            "devices": [d.device_type for d in prism.hardware.present_devices().devices],
            "parasail": parasail.__version__,
            "parasail_library": ".".join(str(v) for v in parasail.version()),
        },
        "budget_s": args.budget,
        "rows": [],
    }
    for case in cases:
        row = run_case(case, args.budget, rng)
        record["rows"].append(row)
        print(f"{row['ratio']:.3f}  {case.name}: {row['fastest_direct']}, Prism "
              f"{row['prism_variant']} lanes {row['prism_lanes']}", flush=True)  # fmt: skip
    runs: dict[str, Any] = {}
    if args.output and Path(args.output + ".json").exists():
        runs = json.loads(Path(args.output + ".json").read_text())["runs"]
    runs[args.label] = record
    text = render(runs)
    print(text)
    if args.output:
        Path(args.output + ".json").write_text(json.dumps({"runs": runs}, indent=2) + "\n")
        Path(args.output + ".md").write_text(text + "\n")
    return 0


def _table(rows: list[list[str]]) -> str:
    out = ["| " + " | ".join(rows[0]) + " |", "|" + "---|" * len(rows[0])]
    out += ["| " + " | ".join(r) + " |" for r in rows[1:]]
    return "\n".join(out)


def _ms(s: float) -> str:
    return f"{s * 1e3:.3g} ms"


def render(runs: dict[str, Any]) -> str:
    lines = [
        "# Smith-Waterman through Prism against the fastest direct parasail call",
        "",
        "Ratio = the fastest direct parasail call that gives the exact score / Prism "
        "(automatic dispatch, warm); >= 1 means Prism is as fast. Minimum over interleaved "
        "rounds. DNA: match 2, mismatch -3, gaps 5 and 2; protein: BLOSUM62, gaps 11 and 1. "
        "Lanes: the widths Prism's parasail kernels ran in one call (`sat`: parasail's 8-bit "
        "kernel that redoes a saturated alignment in 16 bits, then 32).",
        "",
    ]
    if len(runs) > 1:
        names = list(runs)
        rows = [["case", *[f"ratio {n}" for n in names], *[f"lanes {n}" for n in names]]]
        by_case: dict[str, dict[str, Any]] = collections.defaultdict(dict)
        for name, run in runs.items():
            for r in run["rows"]:
                by_case[r["case"]][name] = r
        for case, got in by_case.items():
            rows.append(
                [case]
                + [f"{got[n]['ratio']:.2f}" if n in got else "-" for n in names]
                + [got[n]["prism_lanes"] if n in got else "-" for n in names]
            )
        lines += [_table(rows), ""]
    for name, run in runs.items():
        host = run["host"]
        lines += [
            f"## {name}",
            "",
            f"Host: {host['machine']}, {host['cpus']} usable CPUs, devices "
            f"{', '.join(host['devices'])}; Python {host['python']}; parasail {host['parasail']}"
            f" (C library {host['parasail_library']}).",
            "",
        ]
        rows = [["case", "score", "fastest direct", "direct", "Prism", "ratio", "Prism runs",
                 "lanes", "load"]]  # fmt: skip
        for r in run["rows"]:
            prism_s = r["seconds"][next(k for k in r["seconds"] if k.startswith("prism."))]
            rows.append(
                [
                    r["case"],
                    f"{r['score']:,}",
                    f"`{r['fastest_direct']}`",
                    _ms(r["seconds"][r["fastest_direct"]]),
                    _ms(prism_s),
                    f"**{r['ratio']:.2f}**",
                    f"`{r['prism_variant']}`",
                    r["prism_lanes"],
                    f"{r['load_before'][0]}",
                ]
            )
        lines += [_table(rows), ""]
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
