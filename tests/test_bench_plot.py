"""The figure of ``prism bench --plot`` (prism_core/_bench_plot.py), checked on the matplotlib
Figure it builds (its panels, labels, legends and title), not on pixels.

The reports are a real ``run_bench`` (NumPy's reference only, as the core's tests see it) and
hand-built rows of real ``Measurement`` objects for several backends, failures included.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from prism_core._bench import PRISM, BenchReport, BenchRow, run_bench
from prism_core._bench_plot import figure, plot
from prism_core._tuning.measurements import Measurement
from prism_core._tuning.tune_report import TuneCase
from prism_core.backend_kit import Examples

pytest.importorskip("matplotlib", reason="the figure needs matplotlib (the [plot] extra)")

HOST = {
    "python": "3.11.7",
    "machine": "x86_64",
    "date": "2026-01-02 03:04:05 UTC",
    "devices": [{"device_type": "generic.x86-64-v4", "name": "AMD EPYC", "index": 0}],
    "backends": {"numpy": "2.4.6", "scipy": "1.17.1", "torch": "2.13.0+cpu"},
}


def timing(variant: str, backend: str, seconds: float, error: str | None = None) -> Measurement:
    """A measurement of five rounds, the fastest ``seconds``."""
    samples = tuple(seconds * f for f in (1.0, 1.1, 1.02, 1.3, 1.05))
    return Measurement(variant, backend, "generic.x86-64-v4", seconds, samples[4], samples,
                       10, error)  # fmt: skip


def row(op: str, dtype: str, n: int, picks: str | None, *timed: Measurement,
        prism_s: float | None = None, batch: int | None = None,
        examples: Examples | None = None) -> BenchRow:  # fmt: skip
    """A row whose check timed ``timed`` and Prism's own call (``prism_s``; ``None``: failed);
    of an op that carries ``examples`` (a plugin's), which count cells."""
    prism = timing(PRISM, "", prism_s or 1.0, error=None if prism_s else "failed")
    case = TuneCase(op, ((n, n),), dtype, n, "cpu", tuple(timed), None, picks, "measured")
    cells = n * n * (batch or 10) if examples is not None else None
    return BenchRow(op, dtype, n, case, (prism, *timed), picks, "measured", batch=batch,
                    cells=cells, examples=examples)  # fmt: skip


def examples(axis: str, *, axis_cells: bool = False) -> Examples:
    """The examples a plugin's op carries, as far as the figure reads them (its axis)."""
    return Examples(
        make=lambda n, dtype, batch: (), nbytes=lambda n, dtype, batch: 0, size="n letters",
        quick=(100,), full=(100,), axis=axis, dtype_label="dna", axis_cells=axis_cells,
    )  # fmt: skip


def several_backends() -> BenchReport:
    """matmul and fft in two dtypes over numpy, scipy and torch (two torch variants for
    matmul), a failed variant, a size where Prism's call failed and nothing was picked."""
    rows = []
    for dtype, slow in (("float32", 1.0), ("float64", 2.0)):
        for n in (16, 128, 512):
            t = slow * n**3 * 1e-10
            rows.append(row(
                "matmul", dtype, n, "numpy.matmul",
                timing("numpy.matmul", "numpy", t),
                timing("scipy.matmul", "scipy", 1.2 * t),
                timing("torch.matmul", "torch", 1.5 * t + 1e-5),
                timing("torch.cuda.matmul", "torch", 0, error="no GPU") if n == 16 else
                timing("torch.cuda.matmul", "torch", 0.5 * t + 1e-4),
                prism_s=1.05 * t,
            ))  # fmt: skip
        for n in (256, 1 << 14, 1 << 20):
            t = slow * n * 1e-9
            rows.append(row(
                "fft.fft", dtype, n, None if n == 256 else "scipy.fft.fft",
                timing("numpy.fft.fft", "numpy", 2 * t),
                timing("scipy.fft.fft", "scipy", t),
                prism_s=None if n == 256 else 1.1 * t,
            ))  # fmt: skip
    return BenchReport(HOST, rows=rows)


#: The axes of two ops a plugin declares (the alignment ops of prism-plugin-genomics).
PAIR = examples("query length n (letters; target 10 n)")
BATCH = examples("cell updates per call (n letters x batch targets of n)", axis_cells=True)


def alignments() -> BenchReport:
    """Two ops a plugin declares with their examples: the core knows them by their records."""
    rows = [
        row("align.pair", "dna", n, "fast.pair",
            timing("numpy.align.pair", "numpy", n * n * 4e-8),
            timing("fast.pair", "fast", n * n * 2e-10),
            prism_s=n * n * 2.1e-10, examples=PAIR)
        for n in (100, 1000)
    ] + [
        row("align.batch", "dna", n, "fast.batch",
            timing("numpy.align.batch", "numpy", n * n * 64 * 4e-8),
            timing("fast.batch", "fast", n * n * 64 * 2e-10),
            prism_s=n * n * 64 * 2.1e-10, batch=64, examples=BATCH)
        for n in (100, 1000)
    ]  # fmt: skip
    return BenchReport(HOST, rows=rows)


def panels(fig: Any) -> dict[str, Any]:
    """The figure's titled axes by title."""
    return {ax.get_title(): ax for ax in fig.axes if ax.get_title()}


def legend(fig: Any, title: str) -> list[str]:
    """The labels of the figure's legend whose title begins with ``title``."""
    for ax in fig.axes:
        got = ax.get_legend()
        if got is not None and got.get_title().get_text().startswith(title):
            return [t.get_text() for t in got.get_texts()]
    raise AssertionError(f"no legend titled {title!r}")


def test_a_real_run_is_drawn_and_written_as_png(tmp_path: Path) -> None:
    report = run_bench(quick=True, ops=["add", "matmul"], dtypes=["float64"], budget_s=10,
                       store=False)  # fmt: skip
    path = tmp_path / "bench.png"
    plot(report, str(path))
    assert path.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    fig = figure(report)
    assert legend(fig, "backend") == ["numpy"]
    assert {"add", "matmul"} <= set(panels(fig))
    assert "numpy " + report.host["backends"]["numpy"] in fig.get_suptitle()


def test_one_colour_per_backend_in_every_panel_and_one_legend_entry_each() -> None:
    fig = figure(several_backends())
    assert legend(fig, "backend") == ["numpy", "scipy", "torch"]
    colours: dict[str, set[Any]] = {}
    for ax in fig.axes:
        for line in ax.get_lines():
            if ":" in (line.get_gid() or ""):
                colours.setdefault(line.get_gid().split(":")[0], set()).add(line.get_color())
    assert set(colours) == {"numpy", "scipy", "torch"}
    assert all(len(c) == 1 for c in colours.values()), colours
    assert len({c for cs in colours.values() for c in cs}) == 3
    # The two variants of torch are told apart by marker, named in the matmul panel.
    assert [t.get_text() for t in panels(fig)["matmul"].get_legend().get_texts()] == [
        "torch", "torch.cuda"
    ]  # fmt: skip
    assert legend(fig, "dtype") == ["float32", "float64"]


def test_axes_say_what_size_counts_and_the_unit_of_time() -> None:
    got = panels(figure(several_backends()))
    assert "matrix side n" in got["matmul"].get_xlabel()
    assert "number of elements n" in got["fft.fft"].get_xlabel()
    for op in ("matmul", "fft.fft"):
        assert re.fullmatch(r"time per call \((s|ms|µs|ns)\)", got[op].get_ylabel())
        assert got[op].get_xscale() == got[op].get_yscale() == "log"
    # An op a plugin declares: its axis is its examples' (the batch's at its cell updates).
    declared = panels(figure(alignments()))
    assert declared["align.pair"].get_xlabel() == PAIR.axis
    assert declared["align.batch"].get_xlabel() == BATCH.axis
    assert declared["align.pair"].get_xscale() == "log"
    at = {float(x) for line in declared["align.batch"].get_lines() for x in line.get_xdata()}
    assert at == {100 * 100 * 64.0, 1000 * 1000 * 64.0}  # the cell updates, not n


def test_prisms_pick_sits_on_the_picked_variants_line() -> None:
    report = several_backends()
    ax = panels(figure(report))["fft.fft"]
    rings = [xy for line in ax.get_lines() if line.get_gid() == "pick" for xy in line.get_xydata()]
    picked = {
        (float(r.n), r.case.seconds(r.picks)) for r in report.rows if r.op == "fft.fft" and r.picks
    }
    assert {(float(x), float(y)) for x, y in rings} == picked  # n = 256 picked nothing
    crosses = [len(line.get_xdata()) for line in ax.get_lines() if line.get_gid() == "prism"]
    assert sum(crosses) == 4  # Prism's call failed at n = 256, in both dtypes


def test_the_spread_of_the_rounds_is_shaded_and_explained() -> None:
    fig = figure(several_backends())
    bands = [c for c in panels(fig)["matmul"].collections if ":" in (c.get_gid() or "")]
    assert len(bands) == 8  # 4 variants x 2 dtypes
    assert "spread: fastest round to upper quartile" in legend(fig, "each line")


def test_the_summary_panel_gives_both_ratios_per_op_against_parity() -> None:
    report = several_backends()
    ax = next(a for t, a in panels(figure(report)).items() if t.startswith("Prism against"))
    assert [t.get_text() for t in ax.get_yticklabels()] == ["matmul", "fft.fft"]
    assert any(list(line.get_xdata()) == [1, 1] for line in ax.get_lines())  # parity at 1
    per_op = report.summary()["per_op"]
    ends = sorted(round(p.get_x() + p.get_width(), 9) for p in ax.patches)
    assert ends == sorted(round(v, 9) for r in per_op.values() for v in r.values())
    assert f"{per_op['fft.fft']['prism_vs_numpy']:.2f}x" in [t.get_text() for t in ax.texts]


def test_the_title_names_host_date_python_and_versions() -> None:
    title = figure(several_backends()).get_suptitle()
    for fact in ("AMD EPYC (generic.x86-64-v4)", "x86_64", "2026-01-02 03:04:05 UTC",
                 "Python 3.11.7", "numpy 2.4.6", "scipy 1.17.1", "torch 2.13.0+cpu"):  # fmt: skip
        assert fact in title


@pytest.mark.parametrize("which", ["one row", "alignment ops only", "nothing timed", "no host"])
def test_sparse_reports_still_draw(which: str, tmp_path: Path) -> None:
    report = several_backends() if which != "alignment ops only" else alignments()
    if which == "one row":
        report.rows = report.rows[:1]
    elif which == "nothing timed":
        report.rows = [row("add", "float64", 1024, None,
                           timing("numpy.add", "numpy", 0, error="boom"))]  # fmt: skip
    elif which == "no host":
        report.host = {}
    path = tmp_path / "bench.svg"
    plot(report, str(path))
    assert path.read_text().lstrip().startswith("<?xml")
    assert any(t.startswith("Prism against") for t in panels(figure(report)))
