"""``prism bench genomics.align`` and ``prism tune genomics.sw_align``: the alignment ops
measured over sequence lengths and batch sizes with every installed plugin, the choices stored
and then used by dispatch in a new process.  Budgets are tiny: what is checked is what the
commands report and store, never how fast anything is."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(600)


def prism(cache: Path, *args: str, code: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PRISM_")}
    env["PRISM_CACHE_DIR"] = str(cache)  # every installed plugin, a cache of the test's own
    command = [sys.executable, "-c", code] if code else [sys.executable, "-m", "prism_core"]
    done = subprocess.run(
        [*command, *args], env=env, capture_output=True, text=True, timeout=580, check=False
    )
    assert "Traceback" not in done.stdout + done.stderr, done.stderr
    return done


def test_bench_genomics_align_measures_both_ops_and_stores_the_choices(tmp_path: Path) -> None:
    done = prism(tmp_path, "bench", "genomics.align", "--budget", "120", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    sizes = [(r["op"], r["n"], r.get("batch")) for r in report["rows"]]
    assert sizes == [
        ("genomics.sw_align", 100, None),
        ("genomics.sw_align", 1000, None),
        ("genomics.sw_align_batch", 100, 64),
        ("genomics.sw_align_batch", 1000, 64),
    ]
    for row in report["rows"]:
        assert row["dtype"] == "dna"
        n, batch = row["n"], row.get("batch")
        assert row["cells"] == (n * 10 * n if batch is None else n * n * batch)
        assert row["prism_gcups"] > 0
        assert any(name.startswith("parasail.") for name in row["times"])
        assert "numpy.genomics." + row["op"].split(".")[1] in row["times"]
    shown = json.loads(prism(tmp_path, "tune", "--show", "--json").stdout)
    dtypes = {(e["op"], e["dtype"]) for e in shown["entries"]}
    assert ("genomics.sw_align", "uint8,uint8,int32") in dtypes
    assert ("genomics.sw_align_batch", "uint8,uint8,int64,int32") in dtypes
    # A new process decides by the stored measurements (a gap, "measured", or none, "tie").
    explained = prism(
        tmp_path,
        code=(
            "import prism_core\n"
            "from prism_core._tuning.tuner import example_arguments\n"
            "args = example_arguments('genomics.sw_align_batch', 1000, batch=64)\n"
            "print(prism_core.explain('genomics.sw_align_batch', *args))\n"
        ),
    )
    assert "decided by: measured: timed on generic." in explained.stdout or (
        "decided by: tie: timed on generic." in explained.stdout
    )


def test_bench_names_what_it_can_benchmark(tmp_path: Path) -> None:
    done = prism(tmp_path, "bench", "genomics.sw_aling", "--no-store")
    assert done.returncode != 0
    assert "genomics.sw_aling not benchmarked" in done.stderr
    assert "genomics.align" in done.stderr


def test_tune_takes_sequence_lengths(tmp_path: Path) -> None:
    done = prism(tmp_path, "tune", "genomics.sw_align", "--sizes", "50", "--budget", "2",
                 "--json")  # fmt: skip
    assert done.returncode == 0, done.stderr
    (report,) = json.loads(done.stdout)
    (case,) = report["cases"]
    assert case["shapes"] == [[50], [500], [5, 5]]
    assert case["dtype"] == "uint8,uint8,int32"
