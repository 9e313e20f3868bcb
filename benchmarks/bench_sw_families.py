"""Smith-Waterman through Prism against every direct parasail call, on cases chosen to make
parasail's kernel families (striped, scan, diagonal) disagree.

The cases cross DNA (match 2, mismatch -1 or -3) and proteins (BLOSUM62 over the 20 amino
acids) with the gap penalties 1/1, 3/1, 5/2, 11/1 and 12/2, unrelated sequences and 90%
identical ones (substitutions), and query/target lengths from 30 x 10,000 to 3,000 x 3,000 for
pairs, and batches (one query against many targets).  Per case, every parasail function is
called directly from parasail's Python module on the strings:
``sw_{striped,scan}_profile_{8,16,32,sat}`` with the query profile built beforehand (not timed)
and ``sw_diag_{8,16,32,sat}`` (parasail has no diagonal kernel with a profile), in a loop over
the targets: a batch's, or for a pair case :data:`PAIR_TARGETS` targets of its kind aligned in
turn, one per call (not one pair over and over: the CPU's branch predictor learns a repeated
pair's branches, which favours the kernels that branch on the data; :data:`PAIR_TARGETS`), its
times reported per pair.  A function counts where it gives the exact score (not saturated,
equal to ``sw_scan_64``'s) for every target.  Each is called twice;
those within 1.5x of the quickest, and Prism (``prism_genomics.sw_align`` or
``sw_align_batch`` on codes encoded once, automatic dispatch, warm, untuned), are then timed in
interleaved rounds (``prism_core._tuning.tuner.measure``), the minimum kept: the ratio
among all contenders.  Then the fastest of them and Prism are timed again alone, head to head
in alternating rounds: the ratio the goal is judged by.  Among many contenders every call runs
after another kernel has filled the caches with its own tables, which costs Prism's longer
Python path (dispatch, the plugin's checks and lane choice) more than a direct call; a program
calls one aligner over and over, as the head-to-head rounds do.  Both ratios are recorded.

With equal penalties (1/1) parasail's striped kernels are not exact in general (2-6% of random
DNA pairs scored below the optimum, every lane width), so Prism never runs them there; a striped
call that happens to be exact on such a case is recorded apart
(``fastest_direct_inexact_in_general``), not as the call Prism is measured against.

Reported per case: the fastest direct function, ratio = its time / Prism's (>= 1: Prism is as
fast), the family and lane width the parasail plugin ran (seen by wrapping its bound C
functions for one untimed call), and the load average before the case (the machine is shared).

Usage::

    python benchmarks/bench_sw_families.py --output PREFIX [--quick] [--budget S] [--cases TEXT]
    python benchmarks/bench_sw_families.py --grid --output PREFIX
    python benchmarks/bench_sw_families.py --check-rule PREFIX.json

writes ``PREFIX.json`` and ``PREFIX.md``.  ``--grid`` records the measurements the plugin's
rule comes from (``prism_plugin_parasail.rule.choose``): every family and lane width the
plugin binds (``{striped,scan}`` in 8, 16 and 32 bits with the profile built beforehand,
``diag`` in 8, 16 and 32 bits), called directly through the plugin's ctypes bindings on codes,
one query against :data:`PAIR_TARGETS` targets of its kind in turn, interleaved, minimum of up
to 7 rounds, per pair, over DNA 2/-1, 2/-3, 5/-4 and BLOSUM62, the five gap penalties, 50-90%
identity and unrelated pairs, queries of 8 to 10,000 letters; each row gives the fastest exact
kernel and the others' times as multiples of it.  ``--check-rule`` lists a recorded grid's rows
where the lane the rule picks was more than 1.05x slower than the fastest.
"""

from __future__ import annotations

import argparse
import collections
import functools
import json
import os
import platform
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

AMINO_ACIDS = "ARNDCQEGHILKMFPSTWYV"
GAPS = ((1, 1), (3, 1), (5, 2), (11, 1), (12, 2))
#: The calls the goal is about: Prism within 0.95x of the fastest direct call from this long.
GOAL_FROM_S = 1e-4
#: A pair case aligns its query against this many targets of its kind in turn, one per call,
#: and reports the time per pair.  Aligning one pair over and over lets the CPU's branch
#: predictor learn that pair's branches: the striped and scan kernels' correction loops branch
#: on the data, the diagonal kernel's do not (measured: DNA 2/-1, gaps 3/1, 30 x 10,000
#: unrelated, ``sw_striped_profile_32`` 0.117 ms on one target repeated, 0.247 ms over 8
#: targets in turn; ``sw_diag_8`` 0.19 ms both ways), which no search or set of pairs does.
PAIR_TARGETS = 8


@dataclass(frozen=True)
class Case:
    """One case: a pair (``targets == 1``, ``batch`` false) or a batch."""

    scoring: str  # "dna2/-1", "dna2/-3" or "protein"
    gap_open: int
    gap_extend: int
    query: int
    target: int
    #: Identity of each target with the query (substitutions only); ``None``: unrelated.
    identity: float | None
    targets: int = 1
    batch: bool = False

    @property
    def name(self) -> str:
        kind = "batch" if self.batch else "pair"
        size = f"{self.query:,} x " + (
            f"{self.targets} of {self.target:,}" if self.batch else f"{self.target:,}"
        )
        similar = "unrelated" if self.identity is None else f"{self.identity:.0%} identical"
        gaps = f"{self.gap_open}/{self.gap_extend}"
        return f"{self.scoring} {gaps} {kind} {size}, {similar}"


PAIRS = ((30, 10_000), (100, 3000), (300, 3000), (1000, 10_000), (3000, 3000))
BATCHES = ((1000, 1000, 16), (100, 300, 256), (30, 1000, 128))


def _cases() -> tuple[Case, ...]:
    out = []
    for scoring in ("dna2/-1", "dna2/-3", "protein"):
        for o, e in GAPS:
            for identity in (None, 0.9):
                out += [Case(scoring, o, e, n, m, identity) for n, m in PAIRS]
                out += [Case(scoring, o, e, n, m, identity, t, True) for n, m, t in BATCHES]
    return tuple(out)


CASES = _cases()
#: ``--quick``: the held-out case and a few that disagree, one per family.
QUICK = tuple(
    c
    for c in CASES
    if (c.scoring, c.gap_open, c.query, c.target, c.batch)
    in {
        ("dna2/-1", 3, 1000, 10_000, False),
        ("protein", 11, 1000, 10_000, False),
        ("dna2/-3", 1, 30, 10_000, False),
        ("dna2/-1", 1, 1000, 10_000, False),
    }
)


def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def _sequences(case: Case, rng: Any) -> tuple[str, list[str]]:
    letters = AMINO_ACIDS if case.scoring == "protein" else "ACGT"
    pool = list(letters)

    def random(n: int) -> str:
        return "".join(rng.choice(pool, n))

    query = random(case.query)
    if case.identity is None:
        return query, [random(case.target) for _ in range(_count(case))]
    targets = []
    for _ in range(_count(case)):
        # The query repeated to the target's length, 10% of its letters substituted.
        out = list((query * (case.target // case.query + 1))[: case.target])
        for i in range(len(out)):
            if rng.random() >= case.identity:
                out[i] = rng.choice([c for c in pool if c != out[i]])
        targets.append("".join(out))
    return query, targets


def _count(case: Case) -> int:
    """The targets a case's query is aligned against: a batch's, or :data:`PAIR_TARGETS`."""
    return case.targets if case.batch else PAIR_TARGETS


def _lanes_run(isa: str, call: Callable[[], Any]) -> str:
    """The families and lane widths of the plugin's C functions that ran during ``call()``,
    with how many times (``16 striped`` or ``8 striped x 3, 16 scan x 13``)."""
    from prism_plugin_parasail import kernels, rule

    table = kernels._kernels_of(rule.ISAS[isa]).align
    seen: collections.Counter[str] = collections.Counter()
    saved = dict(table)
    for key, fn in saved.items():

        def spy(*args: Any, _fn: Any = fn, _lane: str = f"{key[1]} {key[0]}") -> Any:
            seen[_lane] += 1
            return _fn(*args)

        table[key] = spy
    try:
        call()
    finally:
        table.update(saved)
    return ", ".join(f"{lane} x {n}" if n > 1 else lane for lane, n in seen.items())


def _scoring(case: Case) -> tuple[Any, Any, Any]:
    """Prism's scoring, its alphabet (``None``: DNA) and parasail's matrix."""
    import parasail  # type: ignore[import-untyped, unused-ignore]
    from prism_genomics import BLOSUM62, PROTEIN, Scoring

    if case.scoring == "protein":
        return BLOSUM62.with_gaps(case.gap_open, case.gap_extend), PROTEIN, parasail.blosum62
    mismatch = int(case.scoring.rsplit("/", 1)[1])
    scoring = Scoring.match_mismatch(
        2, mismatch, gap_open=case.gap_open, gap_extend=case.gap_extend
    )
    return scoring, None, parasail.matrix_create("ACGT", 2, mismatch)


def run_case(case: Case, budget: float, rng: Any) -> dict[str, Any]:
    import numpy as np
    import parasail
    import prism_genomics
    from prism_genomics import encode

    import prism_core as prism
    from prism_core._tuning.candidates import Runner
    from prism_core._tuning.tuner import measure

    scoring, alphabet, matrix = _scoring(case)
    o, e = case.gap_open, case.gap_extend
    q_text, t_texts = _sequences(case, rng)
    q = encode(q_text) if alphabet is None else encode(q_text, alphabet)
    codes = [encode(t) if alphabet is None else encode(t, alphabet) for t in t_texts]
    exact = [parasail.sw_scan_64(q_text, t, o, e, matrix).score for t in t_texts]

    # Every contender aligns the query against each target in turn and returns the results: a
    # batch's in one call, a pair case's over PAIR_TARGETS calls (per pair: the time / that).
    contenders: dict[str, Callable[[], Any]] = {}
    loop = " loop" if case.batch else ""
    for width in ("8", "16", "32", "sat"):
        diag = getattr(parasail, f"sw_diag_{width}")
        contenders[f"sw_diag_{width}{loop}"] = functools.partial(
            lambda fn: [fn(q_text, t, o, e, matrix) for t in t_texts], diag
        )
        profile = getattr(parasail, f"profile_create_{width}")(q_text, matrix)
        for method in ("striped", "scan"):
            fn = getattr(parasail, f"sw_{method}_profile_{width}")
            contenders[f"sw_{method}_profile_{width}{loop}"] = functools.partial(
                lambda fn, p: [fn(p, t, o, e) for t in t_texts], fn, profile
            )
    exact_ones: dict[str, float] = {}
    for label, call in contenders.items():
        got = call()
        if all(not r.saturated and r.score == s for r, s in zip(got, exact, strict=True)):
            began = time.perf_counter()
            call()
            first = time.perf_counter() - began
            began = time.perf_counter()
            call()
            exact_ones[label] = min(first, time.perf_counter() - began)
    # With equal penalties parasail's striped kernels are not exact in general (2-6% of random
    # DNA pairs scored below the optimum, at every lane width): where one happens to be exact
    # on a case it is reported apart, not as the call Prism is measured against.
    general = {k: s for k, s in exact_ones.items() if not (o == e and "striped" in k)}
    quickest = min(general.values())
    shortlist = [k for k, s in exact_ones.items() if s <= 1.5 * quickest]

    if case.batch:
        packed = np.concatenate(codes)
        offsets = np.concatenate([[0], np.cumsum([len(c) for c in codes])]).astype(np.int64)
        args: tuple[Any, ...] = (q, packed, offsets, scoring.matrix, o, e)
        op = "genomics.sw_align_batch"

        def prism_call() -> Any:
            return prism_genomics.sw_align_batch(*args)

        got = prism_call()
        assert [int(s) for s in got.scores] == exact, (case.name, got.scores, exact)
    else:
        args = (q, codes[0], scoring.matrix, o, e, False)
        op = "genomics.sw_align"

        def prism_call() -> Any:
            return [prism_genomics.sw_align(q, c, scoring.matrix, o, e, False) for c in codes]

        assert [r.score for r in prism_call()] == exact, case.name
    decision = prism.explain(op, *args)
    chosen = decision.chosen or "-"
    prism_label = f"prism.{op}"
    runners = [Runner(k, "parasail", None, contenders[k]) for k in shortlist]
    runners.append(Runner(prism_label, "", None, prism_call))
    load_before = _load()
    measured = {r.variant: r for r in measure(runners, budget_s=budget, min_rounds=5,
                                               max_rounds=50)}  # fmt: skip
    isa = chosen.removesuffix(".threads").split(".")[2] if chosen.startswith("parasail.") else ""
    lanes = _lanes_run(isa, prism_call) if isa else "-"
    why = next(
        (
            c.reasons[0]
            for c in decision.candidates
            if "the automatic variant runs" in str(c.reasons)
        ),
        "",
    )
    # Times per call of the op: per pair for a pair case (a run aligns its PAIR_TARGETS).
    per = 1 if case.batch else len(codes)
    direct = {k: measured[k].seconds / per for k in shortlist}
    fastest = min((k for k in direct if k in general), key=lambda k: direct[k])
    fastest_any = min(direct, key=lambda k: direct[k])
    prism_s = measured[prism_label].seconds / per
    # Head to head: the fastest direct call and Prism alone, in alternating rounds.  Among all
    # the shortlisted contenders each call runs after another kernel has filled the caches,
    # which costs Prism's longer path of Python more than a direct call (module docstring).
    pair = [r for r in runners if r.variant in (fastest, prism_label)]
    alone = {r.variant: r.seconds / per for r in measure(pair, budget_s=budget, min_rounds=5,
                                                      max_rounds=100, seed=1)}  # fmt: skip
    return {
        "case": case.name,
        "scoring": case.scoring,
        "gaps": [o, e],
        "query": case.query,
        "target": case.target,
        "targets": case.targets,
        "batch": case.batch,
        "identity": case.identity,
        "cells": case.query * case.target * case.targets,
        "score": max(exact),
        "pairs_per_run": per,
        "exact_direct_single_shot_seconds": {k: t / per for k, t in exact_ones.items()},
        "seconds": {**direct, prism_label: prism_s},
        "rounds": {k: len(m.samples) for k, m in measured.items()},
        "fastest_direct": fastest,
        "fastest_direct_inexact_in_general": None if fastest_any == fastest else fastest_any,
        "prism_variant": chosen,
        "prism_lanes": lanes,
        "prism_why": why,
        "ratio": direct[fastest] / prism_s,
        "head_to_head_seconds": alone,
        "ratio_head_to_head": alone[fastest] / alone[prism_label],
        "load_before": load_before,
        "load_after": _load(),
    }


#: The grid's scorings: DNA (match, mismatch) or ``None`` for BLOSUM62.
GRID_SCORINGS = {"dna2/-1": (2, -1), "dna2/-3": (2, -3), "dna5/-4": (5, -4), "blosum62": None}
#: (query, target) lengths of the grid: square-ish pairs, short queries against long targets,
#: long queries against short targets.
GRID_SHAPES = (
    (30, 300), (100, 100), (100, 1000), (300, 300), (300, 3000), (1000, 1000), (1000, 10_000),
    (3000, 3000), (8, 10_000), (16, 10_000), (24, 10_000), (32, 10_000), (48, 10_000),
    (64, 10_000), (100, 10_000), (150, 10_000), (200, 10_000), (1000, 60), (500, 60),
)  # fmt: skip


#: The shapes also measured at 50, 70 and 80% identity (the similarity thresholds).
GRID_IDENTITY_SHAPES = ((1000, 1000), (1000, 10_000))


def _in_turn(kept: Any, lane: Any, targets: list[bytes], m: int, o: int, e: int) -> list[Any]:
    """One kernel of the plugin on the targets in turn (:data:`PAIR_TARGETS`: the CPU learns a
    repeated pair's branches), each result read and freed."""
    from prism_plugin_parasail import kernels

    return [kernels._read(kernels._call(kept, lane, tb, m, o, e)) for tb in targets]


def grid(rng: Any) -> list[dict[str, Any]]:
    """The rule's measurements (module docstring, ``--grid``)."""
    import numpy as np
    from prism_genomics import BLOSUM62
    from prism_plugin_parasail import kernels, rule

    bound = kernels._kernels_of(rule.ISAS["avx2"])
    rows = []
    for name, dna in GRID_SCORINGS.items():
        if dna is None:
            matrix = np.asarray(BLOSUM62.matrix, np.int32)[:20, :20].copy()
        else:
            matrix = np.full((4, 4), dna[1], np.int32)
            np.fill_diagonal(matrix, dna[0])
        k = matrix.shape[0]
        for o, e in GAPS:
            for identity in (None, 0.5, 0.7, 0.8, 0.9):
                for n, m in GRID_SHAPES:
                    if identity in (0.5, 0.7, 0.8) and (n, m) not in GRID_IDENTITY_SHAPES:
                        continue
                    q = rng.integers(0, k, n).astype(np.uint8)
                    targets = []
                    for _ in range(PAIR_TARGETS):
                        if identity is None:
                            t = rng.integers(0, k, m).astype(np.uint8)
                        else:
                            t = np.resize(q, m).copy()
                            changed = rng.random(m) >= identity
                            t[changed] = (t[changed] + rng.integers(1, k, int(changed.sum()))) % k
                        targets.append(t.tobytes())
                    mat = kernels._matrix(matrix)
                    kept = kernels._Query(bound, q.tobytes(), mat)

                    calls = {}
                    for family in ("striped", "scan", "diag"):
                        for bits in (8, 16, 32):
                            if family == "striped" and o == e:
                                continue  # not exact there
                            calls[f"{family}{bits}"] = functools.partial(
                                _in_turn, kept, rule.Lane(bits, family, 0), targets, m, o, e
                            )
                    got = {key: call() for key, call in calls.items()}
                    exact = [r[0] for r in got["scan32"]]
                    ok = {
                        key: calls[key]
                        for key, rs in got.items()
                        if all(not r[3] and r[0] == x for r, x in zip(rs, exact, strict=True))
                    }
                    best = {key: float("inf") for key in ok}
                    began = time.perf_counter()
                    for round_ in range(7):
                        for key, call in ok.items():
                            t0 = time.perf_counter()
                            call()
                            best[key] = min(best[key], (time.perf_counter() - t0) / PAIR_TARGETS)
                        if round_ >= 2 and time.perf_counter() - began > 0.4:
                            break
                    fastest = min(best, key=lambda key: best[key])
                    score = round(sum(exact) / len(exact))
                    rows.append({
                        "scoring": name, "gaps": [o, e], "identity": identity, "query": n,
                        "target": m, "score": score,
                        "similarity": round(score / (min(n, m) * mat.match), 2),
                        "fastest": fastest, "seconds": best, "load": _load()[0],
                    })  # fmt: skip
                    print(f"{name} {o}/{e} {identity} {n}x{m} {fastest}", flush=True)
    return rows


def check_rule(rows: list[dict[str, Any]], slack: float = 1.05) -> str:
    """The grid's rows where the lane the rule picks (``rule.choose``, the likely score the
    row's mean score) took more than ``slack`` times the fastest kernel's time, or gave no exact
    score, slowest first; with how many rows of 0.1 ms or more that is (``--check-rule``)."""
    import numpy as np
    from prism_genomics import BLOSUM62
    from prism_plugin_parasail import kernels, rule

    def matrix(name: str) -> Any:
        dna = GRID_SCORINGS[name]
        if dna is None:
            return np.asarray(BLOSUM62.matrix, np.int32)[:20, :20].copy()
        out = np.full((4, 4), dna[1], np.int32)
        np.fill_diagonal(out, dna[0])
        return out

    off = []
    for row in rows:
        r = kernels.rule_of("avx2", kernels._matrix(matrix(row["scoring"])), *row["gaps"])
        lane, _ = rule.choose(r, row["query"], row["target"], row["score"])
        picked = f"{lane.method}{lane.bits}"
        best = row["seconds"][row["fastest"]]
        ratio = row["seconds"].get(picked, float("inf")) / best
        if ratio > slack:
            off.append((ratio, best, picked, row))
    off.sort(key=lambda x: -x[0])
    lines = [
        f"{len(off)} of {len(rows)} rows: the rule's lane over {slack}x the fastest "
        f"({sum(1 for _, best, _, _ in off if best >= GOAL_FROM_S)} of them of 0.1 ms or more)"
    ]
    for ratio, best, picked, row in off:
        similar = "unrelated" if row["identity"] is None else f"{row['identity']:.0%}"
        lines.append(
            f"{ratio:5.2f}  {row['scoring']} {row['gaps'][0]}/{row['gaps'][1]} {similar} "
            f"{row['query']} x {row['target']}: fastest {row['fastest']} {_ms(best)}, "
            f"the rule {picked}"
        )
    return "\n".join(lines)


def render_grid(rows: list[dict[str, Any]]) -> str:
    lines = [
        "# The measurements of the parasail plugin's family rule",
        "",
        "Each kernel the plugin binds, called directly on codes (striped and scan with the "
        "profile built beforehand) on one query against "
        f"{PAIR_TARGETS} targets of the row's kind in turn, interleaved, minimum of up to 7 "
        "rounds, per pair; only kernels that gave the exact score unsaturated for every target. "
        "Score: the mean over the targets. `others`: the other kernels' times as multiples of "
        "the fastest. Similarity: the score over `min(n, m)` times the match score. "
        "`python benchmarks/bench_sw_families.py --grid --output PREFIX`.",
        "",
    ]
    table = [["scoring", "gaps", "identity", "n x m", "score", "similarity", "fastest", "time",
              "others"]]  # fmt: skip
    for r in rows:
        best = r["seconds"][r["fastest"]]
        others = sorted((s / best, key) for key, s in r["seconds"].items() if key != r["fastest"])
        table.append(
            [
                r["scoring"],
                "{}/{}".format(*r["gaps"]),
                "unrelated" if r["identity"] is None else f"{r['identity']:.0%}",
                f"{r['query']} x {r['target']}",
                str(r["score"]),
                f"{r['similarity']:.2f}",
                f"**{r['fastest']}**",
                _ms(best),
                " ".join(f"{key} {x:.2f}" for x, key in others[:5]),
            ]
        )
    return "\n".join([*lines, _table(table), ""])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="four cases, one per family")
    parser.add_argument("--budget", type=float, default=0.6, help="seconds per case")
    parser.add_argument("--output", default=None, help="write PREFIX.json and PREFIX.md")
    parser.add_argument("--cases", default=None, help="only cases whose name has this text")
    parser.add_argument("--grid", action="store_true", help="the rule's measurements")
    parser.add_argument(
        "--check-rule", metavar="GRID_JSON", help="the rule against a recorded grid's rows"
    )
    args = parser.parse_args()
    os.environ["PRISM_CACHE_DIR"] = tempfile.mkdtemp(prefix="prism-bench-sw-families-")
    if args.check_rule:
        print(check_rule(json.loads(Path(args.check_rule).read_text())["rows"]))
        return 0
    if args.grid:
        import numpy as np

        rows = grid(np.random.default_rng(1))
        text = render_grid(rows)
        if args.output:
            Path(args.output + ".json").write_text(json.dumps({"rows": rows}, indent=1) + "\n")
            Path(args.output + ".md").write_text(text)
        else:
            print(text)
        return 0

    import numpy as np
    import parasail

    import prism_core as prism

    cases = QUICK if args.quick else CASES
    if args.cases:
        cases = tuple(c for c in cases if args.cases in c.name)
    rng = np.random.default_rng(7)
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
        print(f"{row['ratio_head_to_head']:.3f} ({row['ratio']:.3f} among all)  {case.name}: "
              f"{row['fastest_direct']} "
              f"{row['seconds'][row['fastest_direct']] * 1e3:.3g} ms, Prism {row['prism_lanes']}"
              f" (load {row['load_before'][0]})", flush=True)  # fmt: skip
    text = render(record)
    print(text)
    if args.output:
        Path(args.output + ".json").write_text(json.dumps(record, indent=2) + "\n")
        Path(args.output + ".md").write_text(text + "\n")
    return 0


def _table(rows: list[list[str]]) -> str:
    out = ["| " + " | ".join(rows[0]) + " |", "|" + "---|" * len(rows[0])]
    out += ["| " + " | ".join(r) + " |" for r in rows[1:]]
    return "\n".join(out)


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def _ms(s: float) -> str:
    return f"{s * 1e3:.3g} ms"


def _inexact(row: dict[str, Any]) -> str:
    name = row.get("fastest_direct_inexact_in_general")
    if not name:
        return ""
    prism_s = row["seconds"][next(k for k in row["seconds"] if k.startswith("prism."))]
    return f"`{name}` {_ms(row['seconds'][name])} ({row['seconds'][name] / prism_s:.2f})"


def render(record: dict[str, Any]) -> str:
    host, rows = record["host"], record["rows"]
    goal = [r for r in rows if r["seconds"][r["fastest_direct"]] >= GOAL_FROM_S]
    short = [r for r in goal if r["ratio_head_to_head"] < 0.95]
    among = [r for r in goal if r["ratio"] < 0.95]
    loads = [r["load_before"][0] for r in rows]
    lines = [
        "# Smith-Waterman kernel families: Prism against every direct parasail call",
        "",
        "Ratio = the fastest direct parasail call that gives the exact score (profile built "
        "beforehand where parasail has one) / Prism (automatic dispatch, warm, untuned); >= 1 "
        "means Prism is as fast. Minimum over interleaved rounds: head to head, the fastest "
        "direct call and Prism alone, alternating (the goal's ratio); among all, every "
        "shortlisted direct call and Prism interleaved. A pair case aligns its query against "
        f"{PAIR_TARGETS} targets of its kind in turn, one per call, and gives the time per pair "
        "(aligning one pair over and over lets the branch predictor learn its branches). "
        "Prism runs: the family and "
        "lane width of the parasail plugin's C functions in one call. With equal penalties "
        "(1/1) the striped kernels are not exact in general and Prism never runs them; where "
        "one was exact and faster on a case, it is noted in the last column.",
        "",
        f"Host: {host['machine']}, {host['cpus']} usable CPUs, devices "
        f"{', '.join(host['devices'])}; Python {host['python']}; parasail {host['parasail']} "
        f"(C library {host['parasail_library']}); shared machine, load average (1 min) "
        f"{min(loads)}-{max(loads)} during the run.",
        "",
        "## Summary",
        "",
        f"- cases: {len(rows)}; ratio min {min(r['ratio'] for r in rows):.2f}, median "
        f"{statistics.median(r['ratio'] for r in rows):.2f}",
        f"- calls of {GOAL_FROM_S * 1e3:g} ms or more (the goal): {len(goal)}; head to head, "
        f"at 0.95x or better: {len(goal) - len(short)}; ratio min "
        f"{min((r['ratio_head_to_head'] for r in goal), default=float('nan')):.2f}, median "
        f"{_median([r['ratio_head_to_head'] for r in goal]):.2f}",
        f"- the same calls timed among all contenders: at 0.95x or better "
        f"{len(goal) - len(among)}; ratio min "
        f"{min((r['ratio'] for r in goal), default=float('nan')):.2f}, median "
        f"{_median([r['ratio'] for r in goal]):.2f}",
        "",
    ]
    if short:
        lines += ["Short of 0.95x head to head (calls of 0.1 ms or more):", ""]
        lines += [f"- {r['case']}: **{r['ratio_head_to_head']:.2f}**, fastest "
                  f"`{r['fastest_direct']}`, Prism {r['prism_lanes']}" for r in short]  # fmt: skip
        lines.append("")
    table = [["case", "score", "fastest direct", "direct", "Prism", "head to head",
              "among all", "Prism runs", "load", "faster but inexact in general"]]  # fmt: skip
    for r in rows:
        prism_s = r["seconds"][next(k for k in r["seconds"] if k.startswith("prism."))]
        table.append(
            [
                r["case"],
                f"{r['score']:,}",
                f"`{r['fastest_direct']}`",
                _ms(r["seconds"][r["fastest_direct"]]),
                _ms(prism_s),
                f"**{r['ratio_head_to_head']:.2f}**",
                f"{r['ratio']:.2f}",
                r["prism_lanes"],
                f"{r['load_before'][0]}",
                _inexact(r),
            ]
        )
    lines += ["## Cases", "", _table(table), ""]
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
