"""The seed's pipeline example (shared/seeds/002_*.txt, section 3.3, "@pr.pipeline def
genomic_pipeline"), run as it is written.

The only thing supplied is ``pr``: Prism itself (``pr.pipeline``, ``pr.stage``) plus the
namespaces of the seed's domain operations, ``pr.preprocessing.parse_fastq``,
``pr.genomics.align_sequences``, ``pr.genomics.call_variants`` and
``pr.postprocessing.generate_report``.  Those are not Prism ops: this test declares them as a
user would, with ``prism.extending.operation`` (a reference implementation each) and
``prism.extending.kernel`` (a GPU variant of ``call_variants``).  They compute a small deterministic
stand-in for the genomics (reads made from the file name instead of read from S3, an ungapped match
score instead of Smith-Waterman), so that the result can be checked against calling the same
functions without the pipeline.

Where the seed wants Graviton, Inferentia or NVIDIA hardware and this host has none, each
stage says so in the report and runs in automatic dispatch; with the simulated H100 of
tests/simulated_gpu_plugin.py (through a real entry point), ``variant_calling`` runs on it.
"""

from __future__ import annotations

import hashlib
import importlib.util
import re
import warnings
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

import prism_core as prism
from prism_core.kernel.dispatch.movement import COPIED

from .conftest import REPO

#: Section 3.3 of the seed, verbatim but for trailing spaces (test_the_copy_is_the_seeds
#: checks it against shared/seeds when that is beside the checkout).
SEED_EXAMPLE = """\
@pr.pipeline
def genomic_pipeline(input_data, reference_genome):
    # Stage 1: Data preparation on Graviton
    with pr.stage("preprocessing", preferred_backend="graviton"):
        parsed_data = pr.preprocessing.parse_fastq(input_data)

    # Stage 2: Alignment on optimal hardware (NVIDIA or Trainium)
    with pr.stage("alignment", dispatch="auto"):
        alignments = pr.genomics.align_sequences(
            parsed_data,
            reference_genome,
            algorithm="smith-waterman"
        )

    # Stage 3: ML-based variant calling on Inferentia or NVIDIA
    with pr.stage("variant_calling", preferred_backend=["inferentia", "nvidia"]):
        variants = pr.genomics.call_variants(alignments)

    # Stage 4: Post-processing on Graviton
    with pr.stage("reporting", preferred_backend="graviton"):
        return pr.postprocessing.generate_report(variants)

# Execute full pipeline
result = genomic_pipeline(
    input_data="s3://my-bucket/samples/sample1.fastq",
    reference_genome="s3://my-bucket/reference/GRCh38.fa"
)
"""

SEEDS = REPO.parent / "shared" / "seeds"


# -- the seed's domain operations, declared as a user would ------------------------------------


def _bases(path: str, shape: tuple[int, ...]) -> Any:
    seed = int.from_bytes(hashlib.sha256(path.encode()).digest()[:8], "little")
    return np.random.default_rng(seed).integers(0, 4, size=shape, dtype=np.uint8)


@prism.extending.operation(name="preprocessing.parse_fastq", array_args=())
def parse_fastq(path: str) -> Any:
    """Reads of a FASTQ file as base codes (0-3), one row per read.  Stand-in: made from the
    file name, not read from it."""
    return _bases(path, (64, 32))


@prism.extending.operation(name="genomics.align_sequences", array_args=(0,))
def align_sequences(reads: Any, reference_genome: str, *, algorithm: str = "smith-waterman") -> Any:
    """Per read, the best count of matching bases over every offset in the reference (an
    ungapped local score standing in for Smith-Waterman)."""
    if algorithm != "smith-waterman":
        raise ValueError(f"algorithm must be 'smith-waterman', got {algorithm!r}")
    reference = _bases(reference_genome, (512,))
    n = reads.shape[1]
    windows = np.lib.stride_tricks.sliding_window_view(reference, n)  # (offsets, n)
    matches = (np.asarray(reads)[:, None, :] == windows[None, :, :]).sum(axis=2)
    return matches.max(axis=1).astype(np.float64)


@prism.extending.operation(name="genomics.call_variants", array_args=(0,))
def call_variants(scores: Any) -> Any:
    """A variant where a read aligns poorly: its score below the mean by a standard deviation."""
    s = np.asarray(scores)
    return (s < s.mean() - s.std()).astype(np.float64)


@prism.extending.operation(name="postprocessing.generate_report", array_args=(0,))
def generate_report(variants: Any) -> Any:
    v = np.asarray(variants)
    return {"reads": int(v.size), "variants": int(v.sum())}


pr = SimpleNamespace(
    pipeline=prism.pipeline,
    stage=prism.stage,
    preprocessing=SimpleNamespace(parse_fastq=parse_fastq),
    genomics=SimpleNamespace(align_sequences=align_sequences, call_variants=call_variants),
    postprocessing=SimpleNamespace(generate_report=generate_report),
)

_gpu_kernel: list[Any] = []


def _declare_gpu_kernel() -> None:
    """A ``simgpu`` variant of ``call_variants``, as a plugin or user would add one (once)."""
    if _gpu_kernel:
        return
    from tests.loopback_plugin import Wrapped

    @prism.extending.kernel(call_variants, backend="simgpu", requires={"vendor": "nvidia"})
    def call_variants_gpu(scores: Any) -> Any:
        assert isinstance(scores, Wrapped), "the scores were not moved to the GPU"
        s = scores.data
        return Wrapped((s < s.mean() - s.std()).astype(np.float64))

    _gpu_kernel.append(call_variants_gpu)


def run_seed(tmp_path: Path) -> Any:
    """The seed's text as a module of its own (so that its source can be read, as a user's
    file's can), with ``pr`` given."""
    path = tmp_path / "genomic_pipeline.py"
    path.write_text(SEED_EXAMPLE, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("genomic_pipeline_seed", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    module.pr = pr  # type: ignore[attr-defined]
    spec.loader.exec_module(module)
    return module


def expected() -> dict[str, int]:
    """The seed's steps called one after the other, without the pipeline (references)."""
    reads = parse_fastq.op.variants[0].resolve()("s3://my-bucket/samples/sample1.fastq")
    ref = "s3://my-bucket/reference/GRCh38.fa"
    scores = align_sequences.op.variants[0].resolve()(reads, ref)
    variants = call_variants.op.variants[0].resolve()(scores)
    return generate_report.op.variants[0].resolve()(variants)  # type: ignore[no-any-return]


# -- tests -------------------------------------------------------------------------------------


def test_the_copy_is_the_seeds() -> None:
    files = sorted(SEEDS.glob("002_*.txt"))
    if not files:
        pytest.skip(f"{SEEDS} is not beside this checkout; the copy in this test is used")
    text = files[0].read_text(encoding="utf-8")
    block = re.search(r"```python\n(@pr\.pipeline\ndef genomic_pipeline.*?)```", text, re.S)
    assert block is not None
    seed = "\n".join(line.rstrip() for line in block.group(1).splitlines()) + "\n"
    assert seed == SEED_EXAMPLE


def test_the_seed_pipeline_runs_here_and_says_where_each_stage_ran(tmp_path: Path) -> None:
    module = run_seed(tmp_path)
    assert module.result == expected()
    assert module.result["reads"] == 64
    run = module.genomic_pipeline.run(
        input_data="s3://my-bucket/samples/sample1.fastq",
        reference_genome="s3://my-bucket/reference/GRCh38.fa",
    )
    assert run.result == module.result
    report = run.report
    assert [s.name for s in report.stages] == [
        "preprocessing",
        "alignment",
        "variant_calling",
        "reporting",
    ]
    assert report.checked[0] == (
        "4 stages checked before the first ran: preprocessing, alignment, variant_calling, "
        "reporting"
    )
    # No Graviton, Inferentia or NVIDIA hardware here: every stage says so and runs automatic.
    for s in report.stages:
        assert s.placement == "automatic", s
    assert (
        report.stage("preprocessing")
        .skipped[0]
        .startswith("'graviton': no present device is a 'graviton' device")
    )
    assert [x.split(":")[0] for x in report.stage("variant_calling").skipped] == [
        "'inferentia'",
        "'nvidia'",
    ]
    assert report.bytes_moved == 0


@pytest.mark.usefixtures("simgpu")
def test_with_a_simulated_h100_variant_calling_runs_on_it(tmp_path: Path) -> None:
    """Simulated H100 (tests/simulated_gpu_plugin.py): "nvidia" is present, the GPU variant
    of call_variants runs there, and the scores move to it and the calls back to the host."""
    _declare_gpu_kernel()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        module = run_seed(tmp_path)
    assert module.result == expected()
    report = module.genomic_pipeline.run(
        input_data="s3://my-bucket/samples/sample1.fastq",
        reference_genome="s3://my-bucket/reference/GRCh38.fa",
    ).report
    calling = report.stage("variant_calling")
    assert calling.device == "nvidia.h100-pcie"
    assert calling.why == "preferred_backend 'nvidia': nvidia.h100-pcie is present"
    (move,) = calling.moves
    assert (move.op, move.position, move.backend, move.how) == (
        "genomics.call_variants",
        0,
        "simgpu",
        COPIED,
    )
    assert move.nbytes == 64 * 8 and move.seconds == pytest.approx(64 * 8 / 64e9)
    reporting = report.stage("reporting")
    (back,) = reporting.moves  # the GPU's result goes to NumPy where the report is made
    assert (back.source, back.backend) == ("simgpu", "numpy")
    assert "variant_calling" in report.describe() and "nvidia.h100-pcie" in report.describe()


def test_explaining_the_seed_pipeline_stops_where_a_file_would_be_read(tmp_path: Path) -> None:
    """parse_fastq takes a path, not an array: its result's shape is the file's content, which
    planning does not read, so the plan says so and names the stages it did not reach."""
    module = run_seed(tmp_path)
    plan = prism.explain(
        module.genomic_pipeline,
        input_data="s3://my-bucket/samples/sample1.fastq",
        reference_genome="s3://my-bucket/reference/GRCh38.fa",
    )
    (call,) = plan.stage("preprocessing").calls
    assert call.decision.chosen == "preprocessing.parse_fastq.reference"
    assert plan.stopped is not None
    assert "none of its arguments is a traced array" in plan.stopped
    assert plan.not_reached == ("alignment", "variant_calling", "reporting")
