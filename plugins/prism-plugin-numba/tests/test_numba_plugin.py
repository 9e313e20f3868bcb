"""Discovery through the real entry point; the variants and their checks; the compiled
kernels cached under Prism's cache directory (or where ``NUMBA_CACHE_DIR`` says), and what a
damaged or unwritable cache there costs (a compilation and a warning, never the call); listing
imports no Numba."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import prism_genomics
import pytest
from prism_genomics import Scoring, encode

import prism_core

VARIANTS = {
    "numba.sw_align": ("genomics.sw_align", 10),
    "numba.sw_align_batch": ("genomics.sw_align_batch", 10),
    "numba.sw_align_batch.threads": ("genomics.sw_align_batch", 11),
    "numba.cuda.sw_align_batch": ("genomics.sw_align_batch", 40),
    "numba.cuda.sw_align_batch.dpx": ("genomics.sw_align_batch", 41),
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
    record = prism_core.extending.plugins().records["numba"]
    assert record.status == "loaded", record.reason
    assert record.origin == "entry point"
    assert record.distribution == "prism-plugin-numba"
    assert record.backends == ["numba", "numba-cuda"]
    assert record.info["requires"] == ["numba>=0.57"]
    got = {v.name: (v.op, v.priority) for v in record.variants}
    assert got == VARIANTS
    for variant in record.variants:
        if variant.backend == "numba":  # the GPU ones: test_numba_cuda.py
            assert dict(variant.requirement.mapping) == {"kind": "cpu"}


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
        ps = prism_core.extending.plugins()
        assert ps.records["numba"].status == "loaded", ps.records["numba"]
        bad = sorted(m for m in ("numba", "prism_plugin_numba.kernels") if m in sys.modules)
        assert not bad, bad
        print("ok")
        """,
        {},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


# One process: both ops through dispatch on the numba backend, several calls, every warning
# recorded; then where each kernel's cache is and how many signatures it loaded from it.
_OPS = """
import json, warnings
import numpy as np
import prism_core
import prism_genomics
from prism_genomics import Scoring, encode
s = Scoring.match_mismatch()
q, t = encode("ACGTTGCA"), encode("TTACGTTGCATT")
targets, offsets = encode("ACGTTGCAACGT"), np.array([0, 8, 12], dtype=np.int64)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    with prism_core.use_backend("numba"):
        one = [prism_genomics.sw_align(q, t, s.matrix, 5, 2) for _ in range(3)]
        batch = [prism_genomics.sw_align_batch(q, targets, offsets, s.matrix, 5, 2)
                 for _ in range(3)]
from prism_plugin_numba import kernels
kernels_ = {"profile": kernels._profile, "sw": kernels._sw, "batch": kernels._batch}
print(json.dumps({
    "one": [[r.score, r.query_end, r.target_end] for r in one],
    "batch": [[b.scores.tolist(), b.query_ends.tolist(), b.target_ends.tolist()] for b in batch],
    "cache_warnings": [str(w.message) for w in caught
                       if w.category.__name__ == "NumbaCacheWarning"],
    "cache_paths": {k: f.stats.cache_path for k, f in kernels_.items()},
    "hits": {k: sum(f.stats.cache_hits.values()) for k, f in kernels_.items()},
}))
"""


def _expected() -> dict[str, Any]:
    """What :data:`_OPS` computes, from Prism's reference."""
    s = Scoring.match_mismatch()
    q, t = encode("ACGTTGCA"), encode("TTACGTTGCATT")
    targets, offsets = encode("ACGTTGCAACGT"), np.array([0, 8, 12], dtype=np.int64)
    with prism_core.use_backend("numpy"):
        r = prism_genomics.sw_align(q, t, s.matrix, 5, 2)
        b = prism_genomics.sw_align_batch(q, targets, offsets, s.matrix, 5, 2)
    one = [r.score, r.query_end, r.target_end]
    batch = [np.asarray(b.scores).tolist(), np.asarray(b.query_ends).tolist(),
             np.asarray(b.target_ends).tolist()]  # fmt: skip
    return {"one": [one] * 3, "batch": [batch] * 3}


def _ops(env: dict[str, str]) -> dict[str, Any]:
    import json

    done = _run(_OPS, env)
    assert done.returncode == 0, done.stderr
    got: dict[str, Any] = json.loads(done.stdout)
    expected = _expected()
    assert (got["one"], got["batch"]) == (expected["one"], expected["batch"])
    return got


@pytest.mark.timeout(600)
def test_a_damaged_cache_is_moved_aside_and_compiled_anew(tmp_path: Path) -> None:
    """A truncated index and a data file of random bytes: the op still gives the right result,
    warns naming the files, moves them aside (``.damaged``) and writes a new cache, which the
    next process loads."""
    import random

    env = {"PRISM_CACHE_DIR": str(tmp_path / "prism"), "NUMBA_CACHE_DIR": ""}
    _ops(env)
    (index,) = (tmp_path / "prism" / "numba").rglob("kernels._profile-*.nbi")
    (data,) = (tmp_path / "prism" / "numba").rglob("kernels._sw-*.1.nbc")
    damaged = {
        index: index.read_bytes()[: index.stat().st_size // 2],
        data: random.Random(0).randbytes(300),
    }
    for path, content in damaged.items():
        path.write_bytes(content)

    second = _ops(env)
    warned = "\n".join(second["cache_warnings"])
    assert len(second["cache_warnings"]) == 2, warned
    assert str(index.parent) in warned
    for path, content in damaged.items():
        assert path.name in warned
        aside = path.with_name(path.name + ".damaged")
        assert aside.read_bytes() == content, f"{path.name} was not moved aside"
        assert path.read_bytes() != content, f"{path.name} is still the damaged file"

    third = _ops(env)
    assert third["cache_warnings"] == []
    assert third["hits"]["profile"] >= 1 and third["hits"]["sw"] >= 1


@pytest.mark.timeout(600)
@pytest.mark.parametrize("how", ["read-only", "a file in the way"])
def test_an_unwritable_cache_directory_compiles_without_a_cache(tmp_path: Path, how: str) -> None:
    """One warning naming the directory for the whole process, however many calls; no kernel
    cached anywhere (Numba would otherwise fall back to caching beside the module)."""
    where = tmp_path / "prism" / "numba"
    where.parent.mkdir()
    if how == "a file in the way":
        where.write_text("not a directory\n")
    else:
        where.mkdir()
        where.chmod(0o555)
        try:
            (where / "probe").touch()
        except OSError:
            pass
        else:  # root (uid 0 with its capabilities) writes there all the same
            where.chmod(0o755)
            pytest.skip(f"chmod 0o555 does not make {where} unwritable (running as root?)")
    try:
        got = _ops({"PRISM_CACHE_DIR": str(tmp_path / "prism"), "NUMBA_CACHE_DIR": ""})
    finally:
        if where.is_dir():
            where.chmod(0o755)
    assert len(got["cache_warnings"]) == 1, got["cache_warnings"]
    assert str(where) in got["cache_warnings"][0]
    assert got["cache_paths"] == {"profile": None, "sw": None, "batch": None}


def test_its_thread_settings_are_in_the_tuning_fingerprint(monkeypatch: pytest.MonkeyPatch) -> None:
    """Numba's thread count changes how fast the batch kernels run: a choice measured under
    another count is not reused (``Backend.settings``)."""
    backend = prism_core.extending.plugins().backend("numba")
    monkeypatch.delenv("NUMBA_NUM_THREADS", raising=False)
    assert "NUMBA_NUM_THREADS" not in backend.settings()
    monkeypatch.setenv("NUMBA_NUM_THREADS", "1")
    assert backend.settings()["NUMBA_NUM_THREADS"] == "1"
