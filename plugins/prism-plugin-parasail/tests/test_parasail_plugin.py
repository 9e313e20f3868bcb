"""Discovery through the real entry point; requirements on CPU flags, checked on simulated
descriptions; listing imports no parasail; a host without parasail."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from prism_genomics import DNA, Scoring, encode

import prism_core

#: Each variant's op, priority and the CPU flag it requires.
VARIANTS = {
    "parasail.sw_align.avx2": ("genomics.sw_align", 20, "avx2"),
    "parasail.sw_align.sse41": ("genomics.sw_align", 15, "sse4_1"),
    "parasail.sw_align.neon": ("genomics.sw_align", 20, "asimd"),
    "parasail.sw_align_batch.avx2": ("genomics.sw_align_batch", 20, "avx2"),
    "parasail.sw_align_batch.sse41": ("genomics.sw_align_batch", 15, "sse4_1"),
    "parasail.sw_align_batch.neon": ("genomics.sw_align_batch", 20, "asimd"),
    "parasail.sw_align_batch.avx2.threads": ("genomics.sw_align_batch", 21, "avx2"),
    "parasail.sw_align_batch.sse41.threads": ("genomics.sw_align_batch", 16, "sse4_1"),
    "parasail.sw_align_batch.neon.threads": ("genomics.sw_align_batch", 21, "asimd"),
}
#: One variant per kernel family too, one below the automatic one (for the tuner).
VARIANTS |= {
    f"parasail.{op.removeprefix('genomics.')}.{isa}.{family}": (op, priority - 1, flag)
    for op in ("genomics.sw_align", "genomics.sw_align_batch")
    for isa, priority, flag in (
        ("avx2", 20, "avx2"),
        ("sse41", 15, "sse4_1"),
        ("neon", 20, "asimd"),
    )
    for family in ("striped", "scan", "diag")
}


def _pair() -> tuple[object, ...]:
    scoring = Scoring.match_mismatch()
    return (
        encode("ACGTACGTTGCA", DNA),
        encode("TTACGTACGAGCATT", DNA),
        scoring.matrix,
        scoring.gap_open,
        scoring.gap_extend,
        False,
    )


def _run(code: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **(env or {})},
        check=False,
    )


def test_found_through_its_entry_point() -> None:
    record = prism_core.extending.plugins().records["parasail"]
    assert record.status == "loaded", record.reason
    assert record.origin == "entry point"
    assert record.distribution == "prism-plugin-parasail"
    assert record.target == "prism_plugin_parasail.plugin"
    assert record.backends == ["parasail"]
    assert record.problems == []
    assert record.info["requires"] == ["parasail>=1.3"]


def test_each_variant_requires_the_flag_of_its_instructions() -> None:
    record = prism_core.extending.plugins().records["parasail"]
    got = {v.name: v for v in record.variants}
    assert set(got) == set(VARIANTS)
    for name, (op, priority, flag) in VARIANTS.items():
        variant = got[name]
        assert (variant.op, variant.priority, variant.backend) == (op, priority, "parasail")
        assert dict(variant.requirement.mapping) == {"kind": "cpu", f"flag:{flag}": True}
        assert variant.can_run is not None
        assert isinstance(variant.fn, str) and variant.fn.startswith("prism_plugin_parasail.ops:")
        # Joined to the op, next to the builtin reference.
        assert name in {v.name for v in prism_core.get_op(op).variants}


def test_the_baseline_x86_description_rejects_avx2_and_sse41_naming_the_flags() -> None:
    """generic.x86-64 (SSE2 only) lists neither flag: both variants are rejected with the flag
    named, and the call is planned for the reference."""
    with prism_core.device("generic.x86-64", simulate=True):
        decision = prism_core.explain("genomics.sw_align", *_pair())
    reasons = {c.variant: " ".join(c.reasons) for c in decision.candidates}
    assert "does not list the CPU flag 'avx2'" in reasons["parasail.sw_align.avx2"]
    assert "does not list the CPU flag 'sse4_1'" in reasons["parasail.sw_align.sse41"]
    assert "does not list the CPU flag 'asimd'" in reasons["parasail.sw_align.neon"]
    assert decision.chosen == "numpy.genomics.sw_align"


@pytest.mark.parametrize(
    ("device", "chosen"),
    [
        ("generic.x86-64-v2", "parasail.sw_align.sse41"),  # SSE4.1, no AVX2
        ("generic.x86-64-v3", "parasail.sw_align.avx2"),
        ("generic.aarch64", "parasail.sw_align.neon"),  # NEON is asimd on Linux
        ("aws.graviton3", "parasail.sw_align.neon"),
    ],
)
def test_each_description_gets_the_widest_instructions_it_lists(device: str, chosen: str) -> None:
    with prism_core.device(device, simulate=True):
        decision = prism_core.explain("genomics.sw_align", *_pair())
    assert decision.chosen == chosen
    reasons = {c.variant: " ".join(c.reasons) for c in decision.candidates}
    if device == "generic.x86-64-v2":
        assert "does not list the CPU flag 'avx2'" in reasons["parasail.sw_align.avx2"]


@pytest.mark.timeout(120)
def test_prism_explain_on_a_simulated_baseline_cpu_names_the_flag() -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "prism_core",
            "explain",
            "genomics.sw_align",
            "--device",
            "generic.x86-64",
            "--simulate",
            "--dtype",
            "uint8",
            "--shape",
            "100,1000,5x5",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    out = done.stdout
    assert "parasail.sw_align.avx2 [parasail, priority 20]" in out, (out, done.stderr)
    assert "generic.x86-64 does not list the CPU flag 'avx2' (required True)" in out
    assert "generic.x86-64 does not list the CPU flag 'sse4_1' (required True)" in out


def test_the_backend_reports_what_this_cpu_executes() -> None:
    backend = prism_core.extending.plugins().backend("parasail")
    assert backend.availability()
    caps = backend.capabilities()
    assert set(caps["instruction_sets"]) == {"avx2", "sse41", "neon"}
    assert caps["batch_threads"] >= 1
    import parasail

    assert caps["instruction_sets"]["avx2"] == bool(parasail.can_use_avx2())


@pytest.mark.timeout(120)
def test_listing_plugins_imports_no_parasail() -> None:
    done = _run(
        "import sys, prism_core\n"
        "ps = prism_core.extending.plugins()\n"
        "assert ps.records['parasail'].status == 'loaded', ps.records['parasail']\n"
        "bad = sorted(m for m in ('parasail', 'prism_plugin_parasail.kernels',\n"
        "    'prism_plugin_parasail.ops') if m in sys.modules)\n"
        "assert not bad, bad\n"
        "print('ok')\n"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


_NO_PARASAIL = """
import sys

class _NoParasail:
    def find_spec(self, name, path=None, target=None):
        if name == "parasail" or name.startswith("parasail."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, _NoParasail())
"""


@pytest.mark.timeout(120)
def test_without_parasail_the_backend_says_why_and_the_reference_computes(
    tmp_path: Path,
) -> None:
    (tmp_path / "sitecustomize.py").write_text(textwrap.dedent(_NO_PARASAIL), encoding="utf-8")
    path = os.pathsep.join(p for p in (str(tmp_path), os.environ.get("PYTHONPATH")) if p)
    done = _run(
        textwrap.dedent(
            """
            import warnings
            warnings.simplefilter("error")
            import numpy as np
            import prism_core
            import prism_genomics
            from prism_genomics import Scoring, encode

            s = Scoring.match_mismatch()
            args = (encode("ACGTACGT"), encode("TTACGTAA"), s.matrix, 5, 2, False)
            state = prism_core.extending.plugins().backend("parasail").availability()
            print("available:", bool(state))
            print("reason:", state.reason)
            print("chosen:", prism_core.explain("genomics.sw_align", *args).chosen)
            print("score:", prism_genomics.sw_align(*args).score)
            print("fallbacks:", prism_core.fallbacks())
            """
        ),
        {"PYTHONPATH": path},
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "available: False" in out
    assert "reason: parasail is not installed (pip install 'parasail>=1.3'" in out
    assert "score: 10" in out  # ACGTA: 5 matches of 2
    assert "fallbacks: []" in out
    assert "chosen: parasail" not in out


def test_small_cpu_affinity_declines_the_threaded_batch() -> None:
    """The threaded batch's check names what it needs; a one-target batch is declined."""
    from prism_plugin_parasail.variants import takes_threaded_batch

    scoring = Scoring.match_mismatch()
    query = np.zeros(2000, dtype=np.uint8)
    targets = np.zeros(2000, dtype=np.uint8)
    one = np.array([0, 2000], dtype=np.int64)
    why = takes_threaded_batch(query, targets, one, scoring.matrix, 5, 2)
    assert isinstance(why, str) and "1 target(s)" in why
