"""The figure of ``prism bench --plot FILE``: time per call against problem size.

One panel per op, time per call against size on log axes: one line per variant and dtype,
at each size the variant's fastest round (the time the table and the oracle use), with a
shaded band from that fastest round to the upper quartile of the rounds (how much the
rounds spread). Each backend has one colour in every panel; the dtypes differ by line style,
the variants of one backend by marker (named in the panel). A ring marks the variant Prism
picks on its own line, a cross Prism's own measured call. The last panel gives, per op, the
geometric mean over sizes of Prism's time over the fastest variant's and over NumPy's. The
title names the host, the date and the versions. Needs matplotlib (the ``plot`` extra).
"""

from __future__ import annotations

import datetime
import math
import os
import textwrap
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from prism_core._bench import BenchReport, BenchRow
    from prism_core._tuning.measurements import Measurement

__all__ = ["figure", "plot", "target"]

_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">")
_STYLES = ("-", "--", ":", "-.")
#: The band's upper edge: this percentile of a variant's per-round times.
_SPREAD_PERCENTILE = 75
#: The summary panel's bars: the summary's key, the legend's words, the colour.
_RATIOS = (
    ("prism_vs_oracle", "Prism / fastest variant", "0.25"),
    ("prism_vs_numpy", "Prism / NumPy alone", "0.7"),
)
#: How Prism's pick (on the picked variant's line) and Prism's measured call are marked.
_PICK: dict[str, Any] = {"marker": "o", "ms": 11, "mfc": "none", "mec": "black", "mew": 1.4,
                         "zorder": 5}  # fmt: skip
_PRISM: dict[str, Any] = {"marker": "x", "ms": 7, "color": "black", "mew": 1.6, "zorder": 6}
_UNITS = ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns"))


#: The figure's name in a directory given as ``--plot DIR``.
DEFAULT_NAME = "prism-bench.png"


def target(path: str) -> str:
    """The file ``prism bench --plot PATH`` writes, checked before anything is measured:
    ``PATH`` itself, a name ending in a format matplotlib writes in a directory that exists
    and can be written; ``PATH.png`` where the name has no extension (as matplotlib would);
    ``PATH/prism-bench.png`` where ``PATH`` is a directory.  Raises ``ValueError`` saying what
    is wrong and what would do (``ImportError`` without matplotlib)."""
    from matplotlib.backend_bases import FigureCanvasBase

    if os.path.isdir(path):
        path = os.path.join(path, DEFAULT_NAME)
    elif path.endswith(("/", os.sep)):
        raise ValueError(f"{path}: the directory does not exist; create it first")
    folder, name = os.path.split(path)
    extension = os.path.splitext(name)[1].lower()
    if not extension:
        path, extension = f"{path.rstrip('.')}.png", ".png"
    formats = sorted(f".{f}" for f in FigureCanvasBase.get_supported_filetypes())
    if extension not in formats:
        raise ValueError(
            f"{path}: matplotlib writes no {extension!r} figure; end the name in one of "
            f"{', '.join(formats)}"
        )
    folder = folder or os.curdir
    if not os.path.isdir(folder):
        raise ValueError(
            f"{path}: the directory {folder} does not exist; create it, or name a file in a "
            "directory that does"
        )
    if os.path.isdir(path):
        raise ValueError(f"{path}: is a directory; name a file, or a directory to write into")
    writable = os.access(path, os.W_OK) if os.path.exists(path) else os.access(folder, os.W_OK)
    if not writable:
        raise ValueError(f"{path}: permission denied; name a file in a directory you can write")
    return path


def plot(report: BenchReport, path: str) -> None:
    """Write the figure of ``report`` to ``path`` (the format from its extension: PNG, SVG,
    PDF; :func:`target` checks it)."""
    figure(report).savefig(path, dpi=130)


def figure(report: BenchReport) -> Figure:
    """The figure of ``report`` (see the module docstring), for ``plot`` to save.

    A bare ``Figure``, outside pyplot: no window, no global state, nothing to close."""
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    ops = list(dict.fromkeys(r.op for r in report.rows))
    backends = _backends(report.rows)
    colours = {b: f"C{i % 10}" for i, b in enumerate(backends)}
    # Line styles tell dtypes apart where a panel has several (float32, float64); a panel of
    # one dtype (an op whose examples fix its types: the alignment ops' "dna") draws solid
    # lines.
    per_op = {op: {r.dtype for r in report.rows if r.op == op} for op in ops}
    dtypes = list(dict.fromkeys(r.dtype for r in report.rows if len(per_op[r.op]) > 1))
    styles = {d: _STYLES[i % len(_STYLES)] for i, d in enumerate(dtypes)}

    panels = len(ops) + 1  # and the summary
    cols = 1 if panels == 1 else 2 if panels <= 4 else 3
    rows = math.ceil(panels / cols)
    fig = Figure(figsize=(5.2 * cols, 3.9 * rows + 1.8), layout="constrained")
    grid = fig.add_gridspec(rows + 1, cols, height_ratios=[*([1.0] * rows), 0.27])
    for i, op in enumerate(ops):
        ax = fig.add_subplot(grid[i // cols, i % cols])
        _op_panel(ax, op, [r for r in report.rows if r.op == op], colours, styles)
    i = len(ops)
    _summary_panel(fig.add_subplot(grid[i // cols, i % cols]), ops, report)

    marks: list[Any] = [
        Patch(color="0.5", alpha=0.25, label="spread: fastest round to upper quartile"),
        Line2D([], [], ls="none", label="the variant Prism picks", **_PICK),
        Line2D([], [], ls="none", label="Prism's call, measured", **_PRISM),
    ]
    groups: list[tuple[str, list[Any], int]] = [
        (
            "backend (same colour in every panel)",
            [Line2D([], [], color=colours[b], lw=2, label=b) for b in backends],
            math.ceil(len(backends) / 3),
        ),
        ("dtype", [Line2D([], [], color="0.3", ls=styles[d], lw=1.2, label=d) for d in dtypes], 1),
        ("each line: a variant's fastest round per size", marks, 1),
        ("last panel", [Patch(color=c, label=label) for _, label, c in _RATIOS], 1),
    ]
    groups = [g for g in groups if g[1]]
    legends = grid[rows, :].subgridspec(1, len(groups), width_ratios=[g[2] for g in groups])
    for i, (title, handles, ncol) in enumerate(groups):
        ax = fig.add_subplot(legends[0, i])
        ax.axis("off")
        ax.legend(
            handles=handles, title=title, ncol=ncol, loc="upper center", frameon=False,
            fontsize=9, title_fontsize=9,
        )  # fmt: skip
    fig.suptitle(_title(report, int(13 * fig.get_figwidth())), fontsize=10)
    return fig


def _backends(rows: Sequence[BenchRow]) -> list[str]:
    """The backends measured, NumPy's reference first, then by name."""
    names = {m.backend for r in rows for m in _timings(r)}
    return sorted(names, key=lambda b: (b != "numpy", b))


def _by_cells(row: BenchRow) -> bool:
    """The row's panel puts its rows at their cell updates (``Examples.axis_cells``)."""
    return row.examples is not None and row.examples.axis_cells and row.cells is not None


def _x(row: BenchRow) -> float:
    """Where a row sits on its panel's x axis: ``n``, or its cell updates."""
    return float(row.cells) if _by_cells(row) and row.cells else float(row.n)


def _timings(row: BenchRow) -> Sequence[Measurement]:
    """The variants' measurements of a row: those of its check, where every variant was timed
    in the same rounds as Prism's own call (``prism_s``), else those of its tuning."""
    check: Sequence[Measurement] = getattr(row, "check", None) or row.case.measurements
    # Prism's own call is in the check too, under the name "prism" and with no backend.
    return [m for m in check if m.backend]


def _seconds(row: BenchRow, variant: str) -> float | None:
    """The time per call of ``variant`` in ``row`` (its fastest round), or ``None``."""
    return next((m.seconds for m in _timings(row) if m.variant == variant and not m.error), None)


def _spread(m: Measurement) -> tuple[float, float] | None:
    """The band of one measurement: its fastest round and the upper quartile of its rounds
    (robust to the odd round slowed by other work on the machine)."""
    if m.error is not None or not m.samples:
        return None
    return min(m.samples), float(np.percentile(m.samples, _SPREAD_PERCENTILE))


def _op_panel(
    ax: Axes,
    op: str,
    rows: Sequence[BenchRow],
    colours: dict[str, str],
    styles: dict[str, str],
) -> None:
    """One op: a line per variant and dtype, Prism's picks and calls marked."""
    from matplotlib.lines import Line2D

    rows = sorted(rows, key=_x)
    backend_of: dict[str, str] = {}  # variant -> backend, in the order first measured
    for r in rows:
        for m in _timings(r):
            backend_of.setdefault(m.variant, m.backend)
    per_backend = Counter(backend_of.values())
    markers: dict[str, str] = {}
    for backend in per_backend:
        names = sorted(v for v, b in backend_of.items() if b == backend)
        markers.update({v: _MARKERS[i % len(_MARKERS)] for i, v in enumerate(names)})
    times: list[float] = []  # every time drawn, for the panel's unit
    for dtype in dict.fromkeys(r.dtype for r in rows):
        same = [r for r in rows if r.dtype == dtype]
        for variant, backend in backend_of.items():
            timed = [(_x(r), m) for r in same for m in _timings(r) if m.variant == variant]
            timed = [(x, m) for x, m in timed if m.error is None]
            if not timed:
                continue
            colour = colours[backend]
            ax.plot(
                [x for x, _ in timed],
                [m.seconds for _, m in timed],
                color=colour,
                ls=styles.get(dtype, "-"),
                marker=markers[variant],
                ms=4,
                lw=1.3,
                gid=f"{backend}:{variant}",
            )
            times += [m.seconds for _, m in timed]
            band = [(x, s) for x, m in timed if (s := _spread(m)) is not None]
            if band:
                ax.fill_between(
                    [x for x, _ in band],
                    [low for _, (low, _) in band],
                    [high for _, (_, high) in band],
                    color=colour,
                    alpha=0.15,
                    lw=0,
                    gid=f"{backend}:{variant}",
                )
                times += [high for _, (_, high) in band]
        picked = [(_x(r), t) for r in same if r.picks and (t := _seconds(r, r.picks))]
        if picked:
            ax.plot(*zip(*picked, strict=True), ls="none", gid="pick", **_PICK)
        prism = [(_x(r), r.prism_s) for r in same if r.prism_s]
        if prism:
            ax.plot(*zip(*prism, strict=True), ls="none", gid="prism", **_PRISM)
            times += [t for _, t in prism if t]
    ax.set_title(op, fontsize=11)
    _axes(ax, op, rows, times)
    several = [v for v, b in backend_of.items() if per_backend[b] > 1]
    if several:
        # The variants of one backend differ by marker: name them here.
        handles = [
            Line2D([], [], color=colours[backend_of[v]], marker=markers[v], ms=5, lw=1,
                   label=_short(v, op))
            for v in several
        ]  # fmt: skip
        ax.legend(handles=handles, fontsize=7, loc="best", framealpha=0.8)


def _short(variant: str, op: str) -> str:
    """A variant's name without the op's: ``parasail.sw_align_batch.avx2`` -> ``parasail.avx2``
    (the panel names the op)."""
    words = set(op.split("."))
    return ".".join(w for w in variant.split(".") if w not in words) or variant


def _axes(ax: Axes, op: str, rows: Sequence[BenchRow], times: Sequence[float]) -> None:
    """Log axes: x base 2 at the measured sizes, y in one unit chosen for the panel."""
    from matplotlib.ticker import FuncFormatter, NullFormatter

    by_cells = all(_by_cells(r) for r in rows)
    examples = rows[0].examples if rows else None
    ax.set_xscale("log", base=10 if by_cells else 2)
    ax.set_yscale("log")
    if examples is None:  # a builtin op's row: its record's examples
        from prism_core._tuning.tuner import BUILTIN_EXAMPLES

        examples = BUILTIN_EXAMPLES.get(op)
    label = examples.axis if examples is not None else "size n"
    ax.set_xlabel(label, fontsize=9)
    sizes = sorted({_x(r) for r in rows})
    if by_cells:
        # The cell counts on the axis; each point's query length x batch above it.
        top = ax.secondary_xaxis("top")
        labels = {_x(r): r.label.replace(" x ", "x") for r in rows}
        top.set_xticks(sizes, [labels[s] for s in sizes])
        top.tick_params(labelsize=7)
    else:
        ax.set_xticks(sizes, [_size_text(s) for s in sizes])
        ax.xaxis.set_minor_formatter(NullFormatter())
    if len(sizes) == 1:
        ax.set_xlim(sizes[0] / 2, sizes[0] * 2)
    positive = [t for t in times if t > 0]
    scale, unit = _unit(positive)
    ax.set_ylabel(f"time per call ({unit})", fontsize=9)
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v / scale:g}"))
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.grid(True, which="major", alpha=0.3)
    ax.tick_params(labelsize=8)


def _size_text(n: float) -> str:
    """A size on the axis: ``512``, or ``2^20`` for large powers of two."""
    k = math.log2(n)
    if n >= 1 << 14 and k == int(k):
        return f"$2^{{{int(k)}}}$"
    return f"{n:g}"


def _unit(times: Sequence[float]) -> tuple[float, str]:
    """The unit for a panel's times: the largest in which their geometric middle is >= 1."""
    if not times:
        return 1.0, "s"
    middle = math.sqrt(min(times) * max(times))
    return next(((s, u) for s, u in _UNITS if middle >= s), _UNITS[-1])


def _summary_panel(ax: Axes, ops: Sequence[str], report: BenchReport) -> None:
    """Per op, Prism's time over the fastest variant's and over NumPy's (geometric means)."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    per_op: dict[str, Any] = report.summary().get("per_op", {})
    height = 0.38
    ratios: list[float] = []
    for j, (key, _label, colour) in enumerate(_RATIOS):
        ys = [i + (j - 0.5) * height for i in range(len(ops))]
        values = [(per_op.get(op) or {}).get(key) for op in ops]
        shown = [(y, v) for y, v in zip(ys, values, strict=True) if v]
        if shown:
            # Bars from 1, the parity line: to the left Prism is faster, to the right slower.
            bars = ax.barh(
                [y for y, _ in shown], [v - 1 for _, v in shown], height, left=1, color=colour
            )
            ax.bar_label(bars, labels=[f"{v:.2f}x" for _, v in shown], fontsize=7, padding=2)
            ratios += [v for _, v in shown]
        for y, v in zip(ys, values, strict=True):
            if not v:
                ax.text(1, y, " not measured", va="center", fontsize=7, color="0.4")
    ax.axvline(1, color="black", lw=1)
    ax.set_xscale("log")
    low = min([*ratios, 1.0])
    high = max([*ratios, 1.0])
    ax.set_xlim(low / 2.5, high * 4)
    ax.set_yticks(range(len(ops)), list(ops), fontsize=8)
    pad = max(0.0, (4 - len(ops)) / 2)  # bars as thick for a few ops as for many
    ax.set_ylim(len(ops) - 0.5 + pad, -0.5 - pad)  # the first op on top
    ax.set_xlabel("Prism's time / the other's (geometric mean over sizes)", fontsize=9)
    ax.set_title("Prism against the fastest and NumPy (< 1: Prism faster)", fontsize=10)
    if high / low < 20:  # under 1.3 decades: ticks at 1, 2 and 5 times the powers of 10
        ax.xaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:g}"))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.tick_params(axis="x", labelsize=8)
    ax.grid(True, axis="x", which="major", alpha=0.3)


def _title(report: BenchReport, width: int) -> str:
    """What the figure shows, then the host, date and Python, then the backends' versions,
    each wrapped at ``width`` characters."""
    host: dict[str, Any] = report.host or {}
    devices = Counter(
        f"{d.get('name') or '?'} ({d.get('device_type') or '?'})" for d in host.get("devices") or []
    )
    facts = [
        ", ".join(f"{k} x {v}" if k > 1 else v for v, k in devices.items()),
        host.get("machine"),
        host.get("date") or datetime.datetime.now().strftime("%Y-%m-%d %H:%M"),
        f"Python {host['python']}" if host.get("python") else None,
    ]
    versions = [f"{b} {v}" for b, v in sorted((host.get("backends") or {}).items())]
    sizes = "quick sizes" if report.quick else "full sizes"
    lines = [
        f"prism bench ({sizes}): time per call against problem size, by backend",
        "host: " + "; ".join(f for f in facts if f),
        *(["backends: " + ", ".join(versions)] if versions else []),
    ]
    return "\n".join(textwrap.fill(line, width) for line in lines)
