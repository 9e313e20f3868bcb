"""prism_genomics' own parts, side by side with Biopython: the FASTA/FASTQ readers and the NumPy
reference of the alignment ops (the variants are benchmarks/bench_genomics.py's).

1. **Reading**: ``prism_genomics.read_sequences`` against ``Bio.SeqIO.parse`` on the same
   generated files (FASTA of 1,000-letter records in 80-letter lines; FASTQ of 150-letter
   reads), every record's sequence touched; MB/s of file.
2. **The reference, one pair**: ``sw_align_reference`` (score and ends) against Biopython's
   ``PairwiseAligner.score`` in local mode (score only), same scoring (match 2, mismatch -3,
   gaps 5/2); GCUPS = cells / second.  And the reference with its traceback.
3. **The reference, one query against many targets**: ``sw_align_batch_reference`` against
   the pair reference called per target (what the batch op saves) and Biopython per target.

Each row's contenders run interleaved, round after round, and the minimum of the rounds is
kept (the machine is shared: minima are the least disturbed figures).

Usage::

    python benchmarks/bench_genomics_core.py [--quick] [--rounds N] [--output PREFIX]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


def interleaved(contenders: dict[str, Callable[[], Any]], rounds: int) -> dict[str, float]:
    """The minimum seconds of each contender over ``rounds`` rounds, run in turn."""
    best = dict.fromkeys(contenders, float("inf"))
    for _ in range(rounds):
        for name, fn in contenders.items():
            began = time.perf_counter()
            fn()
            best[name] = min(best[name], time.perf_counter() - began)
    return best


def make_files(directory: Path, fasta_records: int, fastq_records: int) -> tuple[Path, Path]:
    import numpy as np

    rng = np.random.default_rng(0)
    letters = np.frombuffer(b"ACGT", dtype=np.uint8)
    fasta = directory / "bench.fa"
    with fasta.open("w") as out:
        for i in range(fasta_records):
            seq = letters[rng.integers(0, 4, 1000)].tobytes().decode()
            body = "\n".join(seq[k : k + 80] for k in range(0, 1000, 80))
            out.write(f">rec{i} generated\n{body}\n")
    fastq = directory / "bench.fq"
    with fastq.open("w") as out:
        for i in range(fastq_records):
            seq = letters[rng.integers(0, 4, 150)].tobytes().decode()
            out.write(f"@read{i}\n{seq}\n+\n{'I' * 150}\n")
    return fasta, fastq


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller files and sequences")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds (min kept)")
    parser.add_argument("--output", default=None, help="write PREFIX.json and PREFIX.md")
    args = parser.parse_args()

    import importlib

    import numpy as np

    # Biopython ships no type information: its modules are Any here.
    Align: Any = importlib.import_module("Bio.Align")
    SeqIO: Any = importlib.import_module("Bio.SeqIO")

    import prism_genomics as genomics
    from prism_genomics.reference import sw_align_batch_reference, sw_align_reference

    rows: list[dict[str, Any]] = []
    scheme = genomics.get_scoring("dna")
    matrix = scheme.matrix

    # -- 1. reading -----------------------------------------------------------------------------
    with tempfile.TemporaryDirectory(prefix="prism-bench-genomics-") as tmp:
        n_fa, n_fq = (4_000, 20_000) if args.quick else (20_000, 100_000)
        fasta, fastq = make_files(Path(tmp), n_fa, n_fq)
        for path, fmt in ((fasta, "fasta"), (fastq, "fastq")):
            size = path.stat().st_size

            def prism_read(path: Path = path) -> int:
                return sum(len(r.sequence) for r in genomics.read_sequences(path))

            def bio_read(path: Path = path, fmt: str = fmt) -> int:
                return sum(len(r.seq) for r in SeqIO.parse(str(path), fmt))

            assert prism_read() == bio_read()
            times = interleaved({"prism": prism_read, "biopython": bio_read}, args.rounds)
            rows.append(
                {
                    "case": f"read {fmt} ({size / 1e6:.1f} MB)",
                    "prism_s": times["prism"],
                    "other": "Bio.SeqIO.parse",
                    "other_s": times["biopython"],
                    "prism_rate": f"{size / times['prism'] / 1e6:.0f} MB/s",
                    "other_rate": f"{size / times['biopython'] / 1e6:.0f} MB/s",
                }
            )

    # -- 2. one pair ----------------------------------------------------------------------------
    rng = np.random.default_rng(1)
    n, m = (300, 3000) if args.quick else (1000, 10_000)
    q = rng.integers(0, 4, n).astype(np.uint8)
    t = rng.integers(0, 4, m).astype(np.uint8)
    q_text, t_text = genomics.DNA.decode(q), genomics.DNA.decode(t)
    aligner = Align.PairwiseAligner(
        mode="local", match_score=2, mismatch_score=-3, open_gap_score=-5, extend_gap_score=-2
    )
    assert sw_align_reference(q, t, matrix, 5, 2).score == int(aligner.score(q_text, t_text))
    cells = n * m
    times = interleaved(
        {
            "reference": lambda: sw_align_reference(q, t, matrix, 5, 2),
            "traceback": lambda: sw_align_reference(q, t, matrix, 5, 2, True),
            "biopython": lambda: aligner.score(q_text, t_text),
        },
        max(2, args.rounds // 2),
    )
    for name, label in (("reference", "score and ends"), ("traceback", "with traceback")):
        rows.append(
            {
                "case": f"pair {n} x {m}: reference, {label}",
                "prism_s": times[name],
                "other": "PairwiseAligner.score (local)",
                "other_s": times["biopython"],
                "prism_rate": f"{cells / times[name] / 1e9:.3f} GCUPS",
                "other_rate": f"{cells / times['biopython'] / 1e9:.3f} GCUPS",
            }
        )

    # -- 3. one query, many targets -----------------------------------------------------------
    count = 400 if args.quick else 2000
    q = rng.integers(0, 4, 100).astype(np.uint8)
    targets = [rng.integers(0, 4, int(k)).astype(np.uint8) for k in rng.integers(50, 250, count)]
    offsets = np.zeros(count + 1, dtype=np.int64)
    np.cumsum([len(x) for x in targets], out=offsets[1:])
    packed = np.concatenate(targets)
    cells = len(q) * len(packed)
    texts = [genomics.DNA.decode(x) for x in targets]
    q_text = genomics.DNA.decode(q)
    batch = sw_align_batch_reference(q, packed, offsets, matrix, 5, 2)
    assert batch.scores.tolist() == [int(aligner.score(q_text, x)) for x in texts]
    times = interleaved(
        {
            "batch": lambda: sw_align_batch_reference(q, packed, offsets, matrix, 5, 2),
            "pairs": lambda: [sw_align_reference(q, x, matrix, 5, 2) for x in targets],
            "biopython": lambda: [aligner.score(q_text, x) for x in texts],
        },
        max(2, args.rounds // 2),
    )
    for name, label in (("batch", "batch reference"), ("pairs", "pair reference per target")):
        rows.append(
            {
                "case": f"100 x {count} targets of 50-249: {label}",
                "prism_s": times[name],
                "other": "PairwiseAligner.score per target",
                "other_s": times["biopython"],
                "prism_rate": f"{cells / times[name] / 1e9:.3f} GCUPS",
                "other_rate": f"{cells / times['biopython'] / 1e9:.3f} GCUPS",
            }
        )

    for row in rows:
        row["ratio"] = row["other_s"] / row["prism_s"]
    lines = [
        "# prism_genomics: readers and the NumPy reference, against Biopython",
        "",
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
        f"Python {platform.python_version()}, NumPy {np.__version__}, "
        f"Biopython {__import__('Bio').__version__}; min of {args.rounds} interleaved rounds "
        "(pairs and batches: half as many); ratio = Biopython's time / Prism's (> 1: Prism "
        "faster).",
        "",
        "| case | Prism | rate | Biopython | rate | ratio |",
        "|---|---:|---:|---|---:|---:|",
    ]
    for row in rows:
        lines.append(
            f"| {row['case']} | {row['prism_s'] * 1e3:.1f} ms | {row['prism_rate']} | "
            f"{row['other']}: {row['other_s'] * 1e3:.1f} ms | {row['other_rate']} | "
            f"{row['ratio']:.2f}x |"
        )
    report = "\n".join(lines) + "\n"
    print(report)
    if args.output:
        Path(f"{args.output}.json").write_text(
            json.dumps({"rounds": args.rounds, "quick": args.quick, "rows": rows}, indent=2) + "\n"
        )
        Path(f"{args.output}.md").write_text(report)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
