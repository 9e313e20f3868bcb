"""``prism tune`` and ``prism bench`` (prism_core/_bench.py), run as real subprocesses with the
installed plugins found through their entry points.

Budgets are tiny so that the suite stays quick: what is checked is what the commands report
and store, never how fast anything is.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.timeout(300)


def _env(cache: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PRISM_")}
    env["PRISM_CACHE_DIR"] = str(cache)
    env["PYTHONIOENCODING"] = "utf-8"
    return env


def prism(cache: Path, *args: str, code: str | None = None) -> subprocess.CompletedProcess[str]:
    command = (
        [sys.executable, "-c", code, *args] if code else [sys.executable, "-m", "prism_core", *args]
    )
    proc = subprocess.run(
        command, env=_env(cache), capture_output=True, text=True, timeout=280, check=False
    )
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stderr
    return proc


def test_tune_show_and_clear(tmp_path: Path) -> None:
    tuned = prism(tmp_path, "tune", "add", "--sizes", "16,4096", "--budget", "0.02", "--json")
    assert tuned.returncode == 0, tuned.stderr
    (report,) = json.loads(tuned.stdout)
    assert [c["shapes"] for c in report["cases"]] == [[[16], [16]], [[4096], [4096]]]
    for case in report["cases"]:
        assert case["dtype"] == "fp64"
        assert case["decided"] in {"measured", "declared", "single"}
        timed = [m for m in case["measurements"] if m["error"] is None]
        assert all(m["seconds"] > 0 and m["rounds"] >= 3 for m in timed)
    shown = prism(tmp_path, "tune", "--show", "--json")
    assert shown.returncode == 0, shown.stderr
    data = json.loads(shown.stdout)
    assert len(data["entries"]) == report["stored"]
    assert Path(data["path"]).is_file()
    assert "prism" in data["fingerprint"]
    text = prism(tmp_path, "tune", "--show")
    if report["stored"]:
        assert "add" in text.stdout and "generic." in text.stdout
    cleared = prism(tmp_path, "tune", "--clear")
    assert cleared.returncode == 0
    assert f"removed {report['stored']} tuned choice(s)" in cleared.stdout
    assert json.loads(prism(tmp_path, "tune", "--show", "--json").stdout)["entries"] == []


def test_bench_measures_stores_and_compares(tmp_path: Path) -> None:
    proc = prism(
        tmp_path, "bench", "--ops", "add,matmul", "--dtypes", "float64", "--budget", "0.02",
        "--json",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    report: dict[str, Any] = json.loads(proc.stdout)
    rows = report["rows"]
    assert {(r["op"], r["n"]) for r in rows} == {
        ("add", 1024), ("add", 1 << 20), ("matmul", 16), ("matmul", 128), ("matmul", 512)
    }  # fmt: skip
    for r in rows:
        times = {k: v for k, v in r["times"].items() if v is not None}
        assert r["oracle"] == min(times, key=times.__getitem__)
        assert r["prism_picks"] in r["times"]
        assert r["decided_by"] in {"tuned", "priority"}
        assert r["prism_s"] > 0 and r["oracle_s"] > 0
        assert r["prism_vs_oracle"] == pytest.approx(r["prism_s"] / r["oracle_s"])
    assert report["summary"]["prism_vs_oracle"] > 0
    assert report["host"]["devices"][0]["device_type"].startswith("generic.")
    assert "numpy" in report["host"]["backends"]
    shown = json.loads(prism(tmp_path, "tune", "--show", "--json").stdout)
    assert len(shown["entries"]) == report["stored"]


def test_bench_table(tmp_path: Path) -> None:
    proc = prism(tmp_path, "bench", "--ops", "add", "--dtypes", "float32", "--budget", "0.02")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "Prism picks" in out and "vs fastest" in out and "vs NumPy" in out
    assert "geometric mean: Prism" in out
    assert out.count("\nadd ") == 2


def test_bench_plot(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib", reason="--plot needs matplotlib (the [plot] extra)")
    figure = tmp_path / "bench.svg"
    proc = prism(
        tmp_path, "bench", "--ops", "add", "--dtypes", "float64", "--budget", "0.02",
        "--plot", str(figure),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert figure.read_text().lstrip().startswith("<?xml")
    assert f"plot: {figure}" in proc.stdout


def test_bench_plot_without_matplotlib_says_what_to_install(tmp_path: Path) -> None:
    # matplotlib made unimportable in this process only (a real run of the CLI's main()).
    code = (
        "import sys; sys.modules['matplotlib'] = None\n"
        "from prism_core._cli import main; sys.exit(main(sys.argv[1:]))"
    )
    proc = prism(tmp_path, "bench", "--plot", str(tmp_path / "x.png"), code=code)
    assert proc.returncode == 2
    assert "prism-core[plot]" in proc.stderr
    assert not (tmp_path / "x.png").exists()


@pytest.mark.parametrize(
    ("args", "status", "message"),
    [
        (("bench", "--ops", "matmul,qr"), 1, "--ops: qr not benchmarked; choose among matmul"),
        (("bench", "--dtypes", "int8"), 1, "--dtypes: 'int8' not benchmarked"),
        (("tune",), 2, "name at least one op"),
        (("tune", "matmul"), 2, "--sizes: give the sizes"),
        (("tune", "matmul", "--sizes", "a,b"), 2, "not a comma-separated list of integers"),
        (("tune", "linalg.qr", "--sizes", "4"), 1, "no example arguments for 'linalg.qr'"),
        (("tune", "nosuchop", "--sizes", "4"), 1, "nosuchop"),
    ],
)
def test_bad_arguments_get_a_clear_error(
    tmp_path: Path, args: tuple[str, ...], status: int, message: str
) -> None:
    proc = prism(tmp_path, *args)
    assert proc.returncode == status, proc.stderr
    assert message in proc.stderr
