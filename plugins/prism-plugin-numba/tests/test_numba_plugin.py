"""Discovery through the real entry point; the variants and their checks; the compiled
kernels cached under Prism's cache directory (or where ``NUMBA_CACHE_DIR`` says); listing
imports no Numba."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import prism_core
from prism_core.genomics import Scoring, encode

VARIANTS = {
    "numba.sw_align": ("genomics.sw_align", 10),
    "numba.sw_align_batch": ("genomics.sw_align_batch", 10),
    "numba.sw_align_batch.threads": ("genomics.sw_align_batch", 11),
}


def _run(code: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, **env},
        check=False,
    )


def test_found_through_its_entry_point() -> None:
    record = prism_core.plugins().records["numba"]
    assert record.status == "loaded", record.reason
    assert record.origin == "entry point"
    assert record.distribution == "prism-plugin-numba"
    assert record.backends == ["numba"]
    assert record.info["requires"] == ["numba>=0.57"]
    got = {v.name: (v.op, v.priority) for v in record.variants}
    assert got == VARIANTS
    for variant in record.variants:
        assert dict(variant.requirement.mapping) == {"kind": "cpu"}
        assert variant.backend == "numba"


def test_explain_shows_why_the_threaded_batch_declines_a_small_batch() -> None:
    s = Scoring.match_mismatch()
    query, targets = encode("ACGT"), encode("ACGTACGT")
    offsets = np.array([0, 4, 8], dtype=np.int64)
    decision = prism_core.explain(
        "genomics.sw_align_batch", query, targets, offsets, s.matrix, 5, 2
    )
    reasons = {c.variant: " ".join(c.reasons) for c in decision.candidates}
    assert "too few to share between threads" in reasons["numba.sw_align_batch.threads"]
    assert decision.chosen == "numba.sw_align_batch"


_COMPILE = """
import json
import numpy as np
from prism_plugin_numba import kernels
m = np.full((5, 5), -3, dtype=np.int32)
np.fill_diagonal(m, 2)
q = np.array([0, 1, 2, 3], dtype=np.uint8)
print(json.dumps({
    "result": kernels.align(q, q, m, 5, 2),
    "location": kernels.cache_location(),
    "hits": sum(kernels._sw.stats.cache_hits.values()),
}))
"""


@pytest.mark.timeout(600)
def test_the_kernels_are_cached_under_prisms_cache_directory(tmp_path: Path) -> None:
    """First process compiles and writes the cache there; the second loads it."""
    import json

    env = {"PRISM_CACHE_DIR": str(tmp_path / "prism"), "NUMBA_CACHE_DIR": ""}
    first = _run(_COMPILE, env)
    assert first.returncode == 0, first.stderr
    got = json.loads(first.stdout)
    assert got["result"] == [8, 3, 3]
    assert got["location"] == str(tmp_path / "prism" / "numba")
    cached = list((tmp_path / "prism" / "numba").rglob("*.nbi"))
    assert cached, "no index file of Numba's cache under PRISM_CACHE_DIR/numba"
    second = _run(_COMPILE, env)
    assert second.returncode == 0, second.stderr
    assert json.loads(second.stdout)["hits"] >= 1


@pytest.mark.timeout(600)
def test_numbas_own_setting_is_obeyed(tmp_path: Path) -> None:
    import json

    env = {"PRISM_CACHE_DIR": str(tmp_path / "prism"), "NUMBA_CACHE_DIR": str(tmp_path / "nb")}
    done = _run(_COMPILE, env)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["location"] is None
    assert list((tmp_path / "nb").rglob("*.nbi"))
    assert not (tmp_path / "prism" / "numba").exists()


@pytest.mark.timeout(120)
def test_listing_plugins_imports_no_numba() -> None:
    done = _run(
        """
        import sys, prism_core
        ps = prism_core.plugins()
        assert ps.records["numba"].status == "loaded", ps.records["numba"]
        bad = sorted(m for m in ("numba", "prism_plugin_numba.kernels") if m in sys.modules)
        assert not bad, bad
        print("ok")
        """,
        {},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
