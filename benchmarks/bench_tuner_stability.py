"""How often repeated tunings agree (the same choice in at least 9 of 10 repeated
tunings wherever the gap is above 10 %).

Tunes each case ``--repeats`` times (``prism_core._tuning.tuner.tune_case``, nothing stored),
on the core ops over the quick sizes of ``prism bench`` and both float dtypes, with every
installed backend.  For each case it reports the choices made (the stored winner: the declared
first unless another variant was significantly faster), how often the most frequent choice was
made, and the gap: how much slower the declared first is than the fastest variant, from the
median over the repeats of each variant's time.  The goal applies to the cases whose gap is
above 10 %.

Usage::

    python benchmarks/bench_tuner_stability.py [--repeats 10] [--budget 0.25] [--output PREFIX]
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import platform
import statistics
import time
from pathlib import Path
from typing import Any


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--budget", type=float, default=0.25, help="seconds per tuning")
    parser.add_argument("--ops", default="matmul,fft.fft,linalg.svd,linalg.solve,add")
    parser.add_argument("--output", default=None)
    args = parser.parse_args()

    import prism_core as prism
    from prism_core._bench import QUICK
    from prism_core._tuning.tuner import example_arguments, tune_case

    began = time.perf_counter()
    rows = []
    for op in args.ops.split(","):
        for dtype in ("float32", "float64"):
            for n in QUICK[op]:
                call = example_arguments(op, n, dtype)
                winners: list[str] = []
                times: dict[str, list[float]] = collections.defaultdict(list)
                declared = None
                # Per tuning: which variant was fastest at the minimum, and by how much it beat
                # the declared first (what that tuning saw; the machine may change between).
                seen: list[tuple[str, float]] = []
                for _ in range(args.repeats):
                    case, _entry = tune_case(op, call, budget_s=args.budget)
                    declared = case.declared
                    if case.winner is not None:
                        winners.append(case.winner)
                    ok = {m.variant: m.seconds for m in case.measurements if m.error is None}
                    for variant, seconds in ok.items():
                        times[variant].append(seconds)
                    if declared in ok:
                        quickest = min(ok, key=ok.__getitem__)
                        seen.append((quickest, ok[declared] / ok[quickest] - 1.0))
                if len(times) < 2 or declared not in times:
                    continue
                medians = {k: statistics.median(v) for k, v in times.items()}
                fastest = min(medians, key=medians.__getitem__)
                gap = medians[declared] / medians[fastest] - 1.0
                counts = collections.Counter(winners)
                top, agree = counts.most_common(1)[0]
                rows.append(
                    {
                        "op": op,
                        "dtype": dtype,
                        "n": n,
                        "declared": declared,
                        "fastest": fastest,
                        "gap": gap,
                        "choices": dict(counts),
                        "most_common": top,
                        "agree": agree,
                        "repeats": len(winners),
                        # Tunings that themselves saw the overall fastest ahead by over 10 %.
                        "saw_gap_above_10pct": sum(
                            1 for quickest, g in seen if quickest == fastest and g > 0.10
                        ),
                    }
                )
                print(
                    f"{op} {dtype} n={n}: gap {gap:+.0%}, {agree}/{len(winners)} chose {top} "
                    f"{dict(counts)}",
                    flush=True,
                )
    big = [r for r in rows if r["gap"] > 0.10]
    met = [r for r in big if r["agree"] >= 0.9 * r["repeats"]]
    summary = {
        "cases": len(rows),
        "cases_gap_above_10pct": len(big),
        "cases_gap_above_10pct_meeting_9_of_10": len(met),
        "cases_gap_above_10pct_choosing_the_fastest": sum(
            1 for r in big if r["most_common"] == r["fastest"]
        ),
        "all_cases_meeting_9_of_10": sum(1 for r in rows if r["agree"] >= 0.9 * r["repeats"]),
    }
    meta = {
        "date": time.strftime("%Y-%m-%d"),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "backends": {b.name: b.version for b in prism.extending.backends() if b.available},
        "repeats": args.repeats,
        "budget_s": args.budget,
        "seconds": round(time.perf_counter() - began, 1),
    }
    text = render(meta, summary, rows)
    print(text)
    if args.output:
        Path(args.output + ".json").write_text(
            json.dumps({"meta": meta, "summary": summary, "rows": rows}, indent=2) + "\n"
        )
        Path(args.output + ".md").write_text(text)
    return 0


def render(meta: dict[str, Any], summary: dict[str, Any], rows: list[dict[str, Any]]) -> str:
    out = [
        f"# Repeated tunings: how often they agree ({meta['date']})",
        "",
        f"`python benchmarks/bench_tuner_stability.py --repeats {meta['repeats']} --budget "
        f"{meta['budget_s']}` on {meta['cpus']} CPUs, Python {meta['python']}; backends: "
        + ", ".join(f"{k} {v}" for k, v in meta["backends"].items())
        + f"; {meta['seconds']} s.",
        "",
        f"**Cases whose gap is above 10 %: {summary['cases_gap_above_10pct']}; the same choice "
        f"in at least 9 of 10 tunings: {summary['cases_gap_above_10pct_meeting_9_of_10']}; "
        f"choosing the fastest: {summary['cases_gap_above_10pct_choosing_the_fastest']}.** "
        f"Over all {summary['cases']} cases, {summary['all_cases_meeting_9_of_10']} reach 9 of "
        "10.",
        "",
        "gap: how much slower the declared first variant is than the fastest (medians over the "
        "repeats); agree: tunings that made the most common choice; saw > 10 %: tunings whose "
        "own measurements (minima) had the fastest ahead of the declared first by more than "
        "10 %, which tells a tuner that wavers from a machine whose speeds change between "
        "tunings; choices: how many tunings chose each variant.",
        "",
        "| op | dtype | n | declared | fastest | gap | agree | saw > 10 % | choices |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        choices = ", ".join(f"{k} {v}" for k, v in sorted(r["choices"].items()))
        out.append(
            f"| {r['op']} | {r['dtype']} | {r['n']} | {r['declared']} | {r['fastest']} | "
            f"{r['gap']:+.0%} | {r['agree']}/{r['repeats']} | "
            f"{r.get('saw_gap_above_10pct', '-')}/{r['repeats']} | {choices} |"
        )
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    raise SystemExit(main())
