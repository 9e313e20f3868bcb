"""prism_genomics: scoring, the ops through dispatch, the front end, SequenceAligner (the seed's
section 6.3 run with Prism's names) and ``prism genomics align`` run as a real subprocess.

These tests see this plugin only (conftest: ``isolated_plugin``), so every alignment here runs
the NumPy reference through dispatch; the variants of other plugins are compared with it in
their own suites.  test_genomics_reference.py checks the reference against Biopython and an
independent scalar implementation; test_genomics_io.py the FASTA/FASTQ readers.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import prism_genomics as genomics
import pytest
from prism_genomics import ops, reference
from prism_genomics.result import cigar_ops, render

import prism_core as prism

REPO = Path(__file__).resolve().parents[3]
SEEDS = REPO.parent / "shared" / "seeds"

#: Section 6.3 of shared/seeds/002_*.txt, verbatim (test_the_copy_is_the_seeds checks it).
SEED_EXAMPLE = """\
# Algorithm family with hardware-specific implementations
aligner = sm.SequenceAligner(
    algorithm="smith-waterman",
    adaptation_strategy="performance"
)

# Framework selects optimal variant based on hardware
alignments = aligner.align(sequences, reference)
"""


def rescore(result: genomics.AlignmentResult, query: str, target: str, scheme: Any) -> int:
    """The score of a traced-back alignment, recomputed from its CIGAR and the letters."""
    assert result.cigar is not None and result.query_start is not None
    assert result.target_start is not None
    score, qi, ti = 0, result.query_start, result.target_start
    for n, op in cigar_ops(result.cigar):
        if op == "M":
            for k in range(n):
                score += scheme.score(query[qi + k], target[ti + k])
            qi, ti = qi + n, ti + n
        else:
            score -= scheme.gap_open + (n - 1) * scheme.gap_extend
            qi, ti = (qi + n, ti) if op == "I" else (qi, ti + n)
    assert (qi - 1, ti - 1) == (result.query_end, result.target_end)
    return score


# -- alphabets, encoding, scoring -------------------------------------------------------------


def test_encode_accepts_str_bytes_and_codes_and_folds_case() -> None:
    codes = genomics.encode("ACGTN")
    assert codes.dtype == np.uint8 and codes.tolist() == [0, 1, 2, 3, 4]
    assert genomics.encode(b"acgtn").tolist() == codes.tolist()
    assert genomics.encode(memoryview(b"TTA")).tolist() == [3, 3, 0]
    assert genomics.encode(np.array([3, 2, 1], dtype=np.int64)).dtype == np.uint8
    assert genomics.encode("").shape == (0,)


def test_an_unknown_letter_names_itself_its_position_and_the_alphabet() -> None:
    with pytest.raises(genomics.SequenceError) as info:
        genomics.encode("ACGTRA", what="query")
    message = str(info.value)
    assert "'R' at position 4" in message and "'ACGTN'" in message and "query" in message
    assert "unknown='N'" in message
    assert (info.value.letter, info.value.position) == ("R", 4)
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize(
    ("alphabet", "way_out"),
    [
        (genomics.DNA, "pass unknown='N' to align unknown letters as 'N'"),
        (genomics.PROTEIN, "pass unknown='X' to align unknown letters as 'X'"),  # not '*'
        (genomics.Alphabet("ACGT", "bases"), "pass unknown=LETTER (one of the alphabet's)"),
    ],
    ids=["DNA", "protein", "neither"],
)
def test_the_way_out_is_the_letter_for_any(alphabet: genomics.Alphabet, way_out: str) -> None:
    with pytest.raises(genomics.SequenceError) as info:
        genomics.encode("ACJ", alphabet)
    assert way_out in str(info.value)


def test_unknown_letters_map_to_the_letter_asked_for() -> None:
    assert genomics.encode("ACRYG", unknown="N").tolist() == [0, 1, 4, 4, 2]
    assert genomics.encode("MZJ", genomics.PROTEIN, unknown="X").tolist() == [12, 21, 22]
    with pytest.raises(genomics.SequenceError, match="'U' is not a letter of the DNA"):
        genomics.encode("ACGT", unknown="U")


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("ACGTé", "'é' at position 4 is not an ASCII letter"),
        (b"AC\x00GT", "byte 0x00 at position 2"),
        ("AC GT", "' ' at position 2"),
        (np.array([0, 1, 5], dtype=np.uint8), "code 5 at position 2 is out of range"),
        (np.array([0, -1], dtype=np.int8), "code -1 at position 1 is out of range"),
        (np.zeros((2, 2), dtype=np.uint8), "must be 1-d; got shape (2, 2)"),
    ],
)
def test_bad_sequences_are_located_errors(value: Any, expected: str) -> None:
    with pytest.raises(genomics.SequenceError) as info:
        genomics.encode(value)
    assert expected in str(info.value)


def test_non_sequences_are_type_errors() -> None:
    with pytest.raises(TypeError, match="must be a str, bytes or a 1-d NumPy array"):
        genomics.encode(12345)
    with pytest.raises(TypeError, match="integer dtype"):
        genomics.encode(np.array([0.0, 1.0]))


def test_builtin_schemes() -> None:
    dna = genomics.get_scoring("dna")
    assert (dna.gap_open, dna.gap_extend) == (5, 2)
    assert dna.score("A", "A") == 2 and dna.score("a", "G") == -3 and dna.score("N", "N") == 2
    blosum = genomics.BLOSUM62
    assert (blosum.gap_open, blosum.gap_extend, blosum.alphabet) == (11, 1, genomics.PROTEIN)
    assert np.array_equal(blosum.matrix, blosum.matrix.T)
    assert (blosum.score("W", "W"), blosum.score("A", "A"), blosum.score("*", "*")) == (11, 4, 1)
    full = genomics.DNAFULL
    assert (full.score("A", "A"), full.score("A", "C"), full.score("N", "A")) == (5, -4, -2)
    assert full.score("N", "N") == -1
    assert genomics.get_scoring("NUC.4.4") is full
    assert genomics.get_scoring("BLOSUM62", gap_open=10).gap_open == 10
    with pytest.raises(ValueError, match=r"unknown scoring 'blosum26' \(did you mean 'blosum62'"):
        genomics.get_scoring("blosum26")


@pytest.mark.parametrize(
    ("kwargs", "error", "expected"),
    [
        ({"gap_open": -1}, ValueError, "gap_open must be >= 0"),
        ({"gap_extend": 1.5}, TypeError, "gap_extend must be an int"),
        ({"gap_open": 1, "gap_extend": 2}, ValueError, r"gap_open \(1\) must be >= gap_extend"),
        ({"gap_open": True}, TypeError, "gap_open must be an int"),
    ],
)
def test_bad_penalties_are_refused(kwargs: dict[str, Any], error: type, expected: str) -> None:
    with pytest.raises(error, match=expected):
        genomics.Scoring.match_mismatch(**kwargs)


def test_a_matrix_must_fit_its_alphabet() -> None:
    with pytest.raises(ValueError, match=r"matrix must be 5 x 5 .* got shape \(4, 4\)"):
        genomics.Scoring(np.zeros((4, 4)), genomics.DNA, 5, 2)
    with pytest.raises(TypeError, match="must be integers"):
        genomics.Scoring(np.full((5, 5), 0.5), genomics.DNA, 5, 2)
    scheme = genomics.Scoring(np.eye(5) * 3 - 1, genomics.DNA, 4, 1, name="mine")
    assert scheme.matrix.dtype == np.int32 and not scheme.matrix.flags.writeable
    assert scheme == genomics.Scoring(scheme.matrix, genomics.DNA, 4, 1)
    with pytest.raises(AttributeError, match="immutable"):
        scheme.gap_open = 3  # type: ignore[misc]


# -- the ops, through dispatch ------------------------------------------------------------------


def test_the_ops_are_declared_with_their_references() -> None:
    for name in (ops.SW_ALIGN, ops.SW_ALIGN_BATCH):
        op = prism.get_op(name)
        reference = [v for v in op.variants if v.reference]
        assert [v.name for v in reference] == [f"numpy.{name}"]
        assert reference[0].source == "plugin:genomics"
    decision = genomics.sw_align.explain(
        genomics.encode("ACGT"), genomics.encode("ACG"), genomics.get_scoring().matrix, 5, 2
    )
    assert decision.chosen == "numpy.genomics.sw_align"


@pytest.mark.timeout(120)
def test_the_ops_exist_before_anything_imports_genomics() -> None:
    """The plugin's entry point declares them at discovery: a plugin's variants of them can
    always join, and neither NumPy nor any aligner library is imported by declaring them, nor
    anything of the plugin but its entry point and the ops."""
    code = textwrap.dedent(
        """
        import json, sys
        import prism_core
        prism_core.extending.plugins()
        heavy = [m for m in ("numpy", "parasail", "numba", "torch", "Bio") if m in sys.modules]
        loaded = sorted(m for m in sys.modules if m.startswith("prism_genomics"))
        names = sorted(n for n in prism_core.all_ops() if n.startswith("genomics."))
        import prism_genomics
        prism_genomics.align, prism_genomics.SequenceAligner
        libraries = [m for m in ("parasail", "numba", "torch", "Bio") if m in sys.modules]
        print(json.dumps([heavy, loaded, libraries, names]))
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=100
    )
    heavy, loaded, libraries, names = json.loads(out.stdout)
    assert heavy == []  # discovery declared the ops without NumPy
    assert loaded == ["prism_genomics", "prism_genomics.ops", "prism_genomics.plugin"]
    assert libraries == []  # the front end imports no aligner library
    assert names == ["genomics.sw_align", "genomics.sw_align_batch"]


def test_op_arguments_are_checked() -> None:
    matrix = genomics.get_scoring().matrix
    q = genomics.encode("ACGT")
    with pytest.raises(genomics.AlignmentError, match="query must be a 1-d uint8 array"):
        genomics.sw_align("ACGT", q, matrix, 5, 2, False)
    with pytest.raises(genomics.AlignmentError, match="code 7 at position 1 has no row"):
        genomics.sw_align(q, np.array([0, 7], dtype=np.uint8), matrix, 5, 2, False)
    with pytest.raises(genomics.AlignmentError, match="gap_open must be an int >= 0"):
        genomics.sw_align(q, q, matrix, -5, 2, False)
    with pytest.raises(genomics.AlignmentError, match="square k x k integer array"):
        genomics.sw_align(q, q, matrix[:3], 5, 2, False)
    with pytest.raises(genomics.AlignmentError, match="offsets must start at 0, never decrease"):
        genomics.sw_align_batch(q, q, np.array([0, 3, 2, 4]), matrix, 5, 2)
    with pytest.raises(genomics.AlignmentError, match="end at len\\(targets\\) = 4"):
        genomics.sw_align_batch(q, q, np.array([0, 3]), matrix, 5, 2)


def test_the_work_is_cell_updates() -> None:
    from prism_core._tuning.work import work_of

    work = work_of(ops.SW_ALIGN, ((1000,), (10_000,), (5, 5)), 1)
    assert work is not None and work.flops == ops.CELL_OPS * 1000 * 10_000
    batch = work_of(ops.SW_ALIGN_BATCH, ((100,), (5000,), (51,), (5, 5)), 1)
    assert batch is not None and batch.flops == ops.CELL_OPS * 100 * 5000


# -- adversarial alignments -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "target", "expected"),
    [
        ("", "ACGT", (0, -1, -1)),
        ("ACGT", "", (0, -1, -1)),
        ("", "", (0, -1, -1)),
        ("A", "A", (2, 0, 0)),
        ("A", "C", (0, -1, -1)),
        ("AAAA", "CCCC", (0, -1, -1)),  # all mismatches: nothing aligns
        ("acgt", "ACGT", (8, 3, 3)),  # lowercase folds
        ("AC", "ACAC", (4, 1, 1)),  # two equal maxima: the smallest target end
        ("ACAC", "AC", (4, 1, 1)),  # ... and the smallest query end for the same target end
    ],
)
def test_edge_cases(query: str, target: str, expected: tuple[int, int, int]) -> None:
    result = genomics.align(query, target)
    assert (result.score, result.query_end, result.target_end) == expected
    traced = genomics.align(query, target, traceback=True)
    assert (traced.score, traced.query_end, traced.target_end) == expected
    if expected[0] == 0:
        assert (traced.query_start, traced.target_start, traced.cigar) == (-1, -1, "")
        assert (traced.aligned_query, traced.aligned_target) == ("", "")


def test_a_gap_heavy_optimum() -> None:
    # Two blocks of 20 matches (40 each) joined across 3 extra target letters: 80 - (5 + 2 * 2)
    query = "ACGTTGCAAC" * 2 + "TTGACCAGTA" * 2
    target = "ACGTTGCAAC" * 2 + "GGG" + "TTGACCAGTA" * 2
    result = genomics.align(query, target, traceback=True)
    assert result.score == 80 - 9
    assert result.cigar == "20M3D20M"
    assert result.aligned_query == query[:20] + "---" + query[20:]
    assert result.aligned_target == target
    # A gap in the target instead: an insertion.
    swapped = genomics.align(target, query, traceback=True)
    assert (swapped.score, swapped.cigar) == (71, "20M3I20M")


@pytest.mark.parametrize("length", [64, 200, 17_000])
def test_scores_past_8_and_16_bit_lanes(length: int) -> None:
    """Identical sequences score 2 per letter: 400 overflows int8 lanes, 34,000 int16 lanes."""
    rng = np.random.default_rng(length)
    seq = "".join(rng.choice(list("ACGT"), length))
    result = genomics.align(seq, seq)
    assert (result.score, result.query_end, result.target_end) == (
        2 * length,
        length - 1,
        length - 1,
    )
    batch = genomics.align_batch(seq, [seq[: length // 2], seq])
    assert batch.scores.tolist() == [length // 2 * 2, 2 * length]


def test_blosum62_proteins() -> None:
    result = genomics.align("HEAGAWGHEE", "PAWHEAE", scoring="blosum62", traceback=True)
    assert result.score == rescore(result, "HEAGAWGHEE", "PAWHEAE", genomics.BLOSUM62)
    with pytest.raises(genomics.SequenceError, match="'J' at position 1"):
        genomics.align("AJ", "AA", scoring="blosum62")
    assert genomics.align("AJ", "AA", scoring="blosum62", unknown="X").score == 4


def test_traceback_rescores_and_renders() -> None:
    rng = np.random.default_rng(7)
    scheme = genomics.get_scoring("dna")
    for _ in range(40):
        q = "".join(rng.choice(list("ACGT"), int(rng.integers(1, 60))))
        t = "".join(rng.choice(list("ACGT"), int(rng.integers(1, 60))))
        plain = genomics.align(q, t)
        traced = genomics.align(q, t, traceback=True)
        assert (traced.score, traced.query_end, traced.target_end) == (
            plain.score,
            plain.query_end,
            plain.target_end,
        )
        if traced.score:
            assert rescore(traced, q, t, scheme) == traced.score
            rows = render(
                traced.cigar or "", q, t, traced.query_start or 0, traced.target_start or 0
            )
            assert rows == (traced.aligned_query, traced.aligned_target)


def test_a_traceback_too_large_is_refused_with_the_number(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reference, "TRACEBACK_LIMIT", 100)
    with pytest.raises(
        genomics.AlignmentError, match=r"20 x 30 letters keeps 600 bytes .* \(100\)"
    ):
        genomics.align("A" * 20, "A" * 30, traceback=True)
    assert genomics.align("A" * 20, "A" * 30).score == 40  # without traceback: one row


# -- batches and searches -----------------------------------------------------------------------


def test_a_batch_agrees_with_pairs(monkeypatch: pytest.MonkeyPatch) -> None:
    # Small groups, so that the batch crosses several (the default is 2**20 letters).
    monkeypatch.setattr(reference, "_GROUP_LETTERS", 50)
    rng = np.random.default_rng(3)
    query = "".join(rng.choice(list("ACGT"), 30))
    targets = ["".join(rng.choice(list("ACGT"), int(n))) for n in rng.integers(0, 40, 25)]
    targets[5] = ""
    batch = genomics.align_batch(query, targets)
    assert len(batch) == len(targets)
    for i, target in enumerate(targets):
        pair = genomics.align(query, target)
        assert batch[i] == pair, i
    assert batch[5] == genomics.AlignmentResult(0, -1, -1)
    empty = genomics.align_batch(query, [])
    assert len(empty) == 0


def test_align_many_and_search_agree() -> None:
    rng = np.random.default_rng(11)
    queries = ["".join(rng.choice(list("ACGT"), 25)) for _ in range(3)]
    targets = ["".join(rng.choice(list("ACGT"), int(n))) for n in rng.integers(1, 60, 30)]
    many = genomics.align_many(queries, targets)
    # Streamed in groups of about 40 letters: many groups, the same best hits.
    found = genomics.search(queries, targets, top=4, batch_letters=40)
    assert len(found) == len(many) == 3
    for batch, hits in zip(many, found, strict=True):
        expected = [i for i in batch.top(4) if batch.scores[i] > 0]
        assert [h.target_index for h in hits] == expected
        assert [h.score for h in hits] == [int(batch.scores[i]) for i in expected]
        assert [h.target for h in hits] == [f"targets[{i}]" for i in expected]


def test_search_ranks_equal_scores_by_target_order_and_traces_back() -> None:
    hits = genomics.search(["ACGT"], ["TTTT", "ACGT", "GGACGTGG", "ACGT"], top=2, traceback=True)
    assert [(h.target_index, h.score) for h in hits[0]] == [(1, 8), (2, 8)]
    assert hits[0][1].result.aligned_target == "ACGT"
    assert hits[0][1].result.target_start == 2
    with pytest.raises(ValueError, match="top must be an int >= 1"):
        genomics.search(["A"], ["A"], top=0)


def test_files_are_inputs_too(tmp_path: Path) -> None:
    q = tmp_path / "q.fa"
    q.write_text(">q1\nACGTAC\nGTAC\n")
    t = tmp_path / "t.fasta"
    t.write_text(">t1\nTTTT\n>t2 second\nCCACGTACGTACC\n")
    assert genomics.align(q, "ACGTACGTAC").score == 20
    batch = genomics.align_batch(str(q), t)
    assert batch.scores.tolist() == [2, 20]  # one T of TTTT matches
    hits = genomics.search(q, t)
    assert [(h.query, h.target) for h in hits[0]] == [("q1", "t2"), ("q1", "t1")]
    with pytest.raises(genomics.SequenceFileError, match="more than one record"):
        genomics.align(t, "ACGT")
    with pytest.raises(TypeError, match=r"targets\[0\] is a file name"):
        genomics.align_batch("ACGT", [str(t)])


# -- SequenceAligner: the seed's flow -----------------------------------------------------------


def test_the_copy_is_the_seeds() -> None:
    files = sorted(SEEDS.glob("002_*.txt"))
    if not files:
        pytest.skip(f"{SEEDS} is not beside this checkout; the copy in this test is used")
    text = files[0].read_text(encoding="utf-8")
    block = re.search(r"```python\n(# Algorithm family.*?)```", text, re.S)
    assert block is not None
    assert "\n".join(line.rstrip() for line in block.group(1).splitlines()) + "\n" == SEED_EXAMPLE


def test_the_seed_aligner_runs_with_prisms_names(tmp_path: Path) -> None:
    """Section 6.3 as written: ``sm`` is ``prism_genomics``; the sequences are a FASTQ file of
    reads cut from a reference FASTA file of two records (one with a mutation)."""
    rng = np.random.default_rng(5)
    chr1 = "".join(rng.choice(list("ACGT"), 300))
    chr2 = "".join(rng.choice(list("ACGT"), 200))
    reference = tmp_path / "ref.fa"
    reference.write_text(f">chr1 first\n{chr1[:150]}\n{chr1[150:]}\n>chr2\n{chr2}\n")
    reads = [("r1", chr1[40:90]), ("r2", chr2[10:50]), ("r3", chr2[100:130].lower())]
    mutated = chr1[200:230] + ("A" if chr1[230] != "A" else "C") + chr1[231:260]
    reads.append(("r4", mutated))
    sequences = tmp_path / "reads.fastq"
    sequences.write_text("".join(f"@{n}\n{s}\n+\n{'I' * len(s)}\n" for n, s in reads))
    namespace: dict[str, Any] = {
        "sm": genomics,
        "sequences": str(sequences),
        "reference": str(reference),
    }
    exec(SEED_EXAMPLE, namespace)
    alignments = namespace["alignments"]
    assert [(a.query, a.target) for a in alignments] == [
        ("r1", "chr1"),
        ("r2", "chr2"),
        ("r3", "chr2"),
        ("r4", "chr1"),
    ]
    assert [a.result.target_start for a in alignments] == [40, 10, 100, 200]
    assert [a.cigar for a in alignments] == ["50M", "40M", "30M", "60M"]
    assert alignments[0].score == 100
    assert alignments[3].score == 2 * 59 - 3  # one mismatch in 60 letters
    assert alignments[3].result.aligned_query == mutated


def test_the_aligner_explains_its_mistakes() -> None:
    with pytest.raises(ValueError, match=r"unknown algorithm 'needleman-wunsch'.*'smith-waterman'"):
        genomics.SequenceAligner(algorithm="needleman-wunsch")
    with pytest.raises(ValueError, match=r"'speed' is not a strategy"):
        genomics.SequenceAligner(adaptation_strategy="speed")
    with pytest.raises(genomics.SequenceError, match="'U' is not a letter"):
        genomics.SequenceAligner(unknown="U")


def test_the_aligner_under_each_strategy() -> None:
    reference = ["TTTTTTTT", "GGACGTACGG"]
    for strategy in ("performance", "reference", prism.ExecutionPolicy(priority="speed")):
        aligner = genomics.SequenceAligner("sw", adaptation_strategy=strategy, traceback=False)
        hits = aligner.align(["ACGTAC", "NNNN"], reference)
        assert [(h.target, h.target_index, h.score) for h in hits] == [
            ("reference[1]", 1, 12),
            (None, -1, 0),
        ]
        assert hits[0].cigar is None


# -- the command line, as a real subprocess ---------------------------------------------------


def prism_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [sys.executable, "-m", "prism_core", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stderr
    return proc


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "q.fa").write_text(">q1 first\nACGTACGTTT\n>q2\nGGGGCCCC\n>q3\nNNNN\n")
    (tmp_path / "t.fa").write_text(">t1\nACGTAC\nGTTT\n>t2 desc\nGGGGAAAACCCC\n\n>t3\nCCCC\n")
    return tmp_path


@pytest.mark.timeout(240)
def test_cli_lists_the_best_hits(files: Path) -> None:
    proc = prism_cli("genomics", "align", "q.fa", "t.fa", "--top", "2", cwd=files)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].split() == ["QUERY", "TARGET", "SCORE", "QUERY", "END", "TARGET", "END"]
    assert lines[1].split() == ["q1", "t1", "20", "9", "9"]
    assert lines[-1].startswith("3 queries x 3 targets, scoring dna (gap open 5, extend 2)")
    assert "1 query without a hit" in lines[-1]  # NNNN: N mismatches every base


@pytest.mark.timeout(240)
def test_cli_json_and_traceback(files: Path) -> None:
    proc = prism_cli(
        "genomics", "align", "q.fa", "t.fa", "--json", "--traceback", "--top", "1", cwd=files
    )
    assert proc.returncode == 0, proc.stderr
    document = json.loads(proc.stdout)
    assert document["targets"] == 3 and document["top"] == 1
    assert document["scoring"] == {
        "name": "dna",
        "alphabet": "ACGTN",
        "gap_open": 5,
        "gap_extend": 2,
    }
    first = document["queries"][0]["hits"][0]
    assert first["query"] == "q1" and first["target"] == "t1" and first["cigar"] == "10M"
    assert first["aligned_query"] == first["aligned_target"] == "ACGTACGTTT"
    second = document["queries"][1]["hits"][0]
    assert (second["target"], second["score"], second["cigar"]) == ("t2", 8, "4M")


@pytest.mark.timeout(240)
def test_cli_json_names_the_queries_without_hits(files: Path) -> None:
    proc = prism_cli("genomics", "align", "q.fa", "t.fa", "--json", cwd=files)
    assert proc.returncode == 0, proc.stderr
    queries = json.loads(proc.stdout)["queries"]
    assert [q["query"] for q in queries] == ["q1", "q2", "q3"]
    assert queries[2] == {"query": "q3", "hits": []}  # NNNN: N mismatches every base


@pytest.mark.timeout(240)
@pytest.mark.parametrize(
    ("scoring", "sequence", "wildcard"), [("dna", "ACGTJC", "N"), ("blosum62", "MKTJLV", "X")]
)
def test_cli_suggests_the_alphabets_any_letter_for_unknown_letters(
    files: Path, scoring: str, sequence: str, wildcard: str
) -> None:
    """N (any base) for DNA, X (any amino acid) for proteins: never '*', a stop."""
    (files / "odd.fa").write_text(f">odd\n{sequence}\n")
    proc = prism_cli("genomics", "align", "q.fa", "odd.fa", "--scoring", scoring, cwd=files)
    assert proc.returncode == 1
    assert f"; pass --unknown {wildcard} to align unknown letters as '{wildcard}'" in proc.stderr
    suggested = ("genomics", "align", "q.fa", "odd.fa", "--scoring", scoring)
    proc = prism_cli(*suggested, "--unknown", wildcard, cwd=files)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.timeout(240)
@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (
            gzip.compress(b">t1\nACGT\n"),
            "odd.fa: line 1: this looks gzip-compressed (it starts with bytes 1f 8b), not like "
            "ASCII text: name it odd.fa.gz to have it decompressed as it is read",
        ),
        (
            ">t1\nACGT\n".encode("utf-16"),  # with its byte-order mark
            "odd.fa: line 1: this looks UTF-16 text (it starts with the byte-order mark ff fe), "
            "not ASCII: save it as ASCII (or UTF-8) text",
        ),
    ],
    ids=["gzip", "utf-16"],
)
def test_cli_says_what_a_file_that_is_not_text_looks_like(
    files: Path, content: bytes, expected: str
) -> None:
    (files / "odd.fa").write_bytes(content)
    proc = prism_cli("genomics", "align", "q.fa", "odd.fa", cwd=files)
    assert proc.returncode == 1
    lines = proc.stderr.splitlines()
    assert lines == [f"prism genomics: error: {expected}"], lines


@pytest.mark.timeout(240)
def test_cli_reads_a_file_with_a_utf8_byte_order_mark(files: Path) -> None:
    (files / "bom.fa").write_bytes(b"\xef\xbb\xbf" + (files / "t.fa").read_bytes())
    proc = prism_cli("genomics", "align", "q.fa", "bom.fa", "--json", cwd=files)
    assert proc.returncode == 0, proc.stderr
    hits = json.loads(proc.stdout)["queries"][0]["hits"]
    assert (hits[0]["target"], hits[0]["score"]) == ("t1", 20)


@pytest.mark.timeout(240)
@pytest.mark.parametrize(
    ("content", "status", "expected"),
    [
        (">t1\nACGT1C\n", 1, "bad.fa: record 't1' at line 2: '1' at column 5 is not a sequence"),
        ("ACGT\n>t1\nACGT\n", 1, "bad.fa: line 1: 'ACGT' comes before the first header"),
        (
            ">t1\nACGTJC\n",
            1,
            "bad.fa: targets[0] (record 't1'): 'J' at position 4 is not a letter of the DNA "
            "alphabet 'ACGTN' (lowercase is folded to upper case); pass --unknown N to align",
        ),
    ],
)
def test_cli_errors_are_one_located_line(
    files: Path, content: str, status: int, expected: str
) -> None:
    (files / "bad.fa").write_text(content)
    proc = prism_cli("genomics", "align", "q.fa", "bad.fa", cwd=files)
    assert proc.returncode == status
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"prism genomics: error: {expected}"), lines


@pytest.mark.timeout(240)
@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["q.fa", "missing.fa"], "TARGETS: missing.fa: no such file"),
        (["q.fa", "t.fa", "--gap-open", "1", "--gap-extend", "3"], "gap_open (1) must be >="),
        (["q.fa", "t.fa", "--top", "0"], "--top must be >= 1, got 0"),
        (["q.fa", "t.fa", "--unknown", "U"], "--unknown: 'U' is not a letter"),
        (["q.fa", "t.fa", "--backend", "nump"], "(did you mean 'numpy'?)"),
        (["q.fa", "t.fa", "--scoring", "blosum"], "invalid choice: 'blosum'"),
    ],
)
def test_cli_usage_errors_exit_2(files: Path, args: list[str], expected: str) -> None:
    proc = prism_cli("genomics", "align", *args, cwd=files)
    assert proc.returncode == 2, proc.stderr
    assert expected in proc.stderr


@pytest.mark.timeout(240)
@pytest.mark.skipif(os.name != "posix", reason="a pseudo-terminal needs a POSIX system")
def test_cli_shows_a_progress_bar_on_a_terminal(files: Path) -> None:
    """stderr a real pseudo-terminal: tqdm draws its bar there; stdout (a pipe) gets the table
    alone."""
    import fcntl
    import pty
    import struct
    import termios

    main, secondary = pty.openpty()
    # A terminal of 24 x 80, as a real one has (a new pseudo-terminal has 0 columns, where
    # tqdm draws nothing).
    fcntl.ioctl(secondary, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "prism_core", "genomics", "align", "q.fa", "t.fa"],
            cwd=files,
            stdout=subprocess.PIPE,
            stderr=secondary,
            text=True,
            timeout=120,
            check=False,
        )
        os.close(secondary)
        secondary = -1
        drawn = b""
        while True:
            try:
                chunk = os.read(main, 4096)
            except OSError:  # the terminal's other end is closed: everything was read
                break
            if not chunk:
                break
            drawn += chunk
    finally:
        os.close(main)
        if secondary != -1:
            os.close(secondary)
    assert proc.returncode == 0
    assert b"targets" in drawn and b"%" in drawn
    assert proc.stdout.splitlines()[0].startswith("QUERY")
