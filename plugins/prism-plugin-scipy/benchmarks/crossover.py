"""Where the scipy plugin's variants beat NumPy on this machine, and by how much.

    .venv/bin/python plugins/prism-plugin-scipy/benchmarks/crossover.py [--quick] [SECTION ...]

SECTION is any of ``convolve``, ``fft``, ``workers``, ``solve``, ``linalg`` (default: all).  It
prints Markdown tables: per configuration the best time per call of NumPy's function and of the
plugin's implementation (``prism_plugin_scipy.ops``, exactly what the variants run), and their
ratio (NumPy / SciPy: above 1, SciPy is faster).  The plugin's thresholds
(``CONVOLVE_MIN_SHORT``, ``CONVOLVE_MIN_SIZE``, ``CONVOLVE_OA_RATIO``, ``CHOLESKY_MIN_N``,
``PARALLEL_MIN_ELEMENTS``) are read from the plugin and checked against what is measured: each
convolve row says whether ``can_run`` takes the call and whether that was right.

Method, for a shared and noisy machine: the candidates of one configuration are timed in
interleaved rounds (a block of calls of each in turn, ~2 ms a block, in a rotating order), and
the minimum time per call over the rounds is kept: other processes only ever add time.  Threads
are the libraries' defaults (threadpoolctl reports them in the header).
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import platform
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import scipy
import threadpoolctl
from prism_plugin_scipy import ops, variants, workers
from scipy import fft as sfft
from scipy import signal

Timings = dict[str, float]


def race(candidates: dict[str, Callable[[], Any]], rounds: int, block_s: float = 0.002) -> Timings:
    """The best seconds per call of each candidate, timed in interleaved rounds."""
    inner: dict[str, int] = {}
    for name, fn in candidates.items():
        fn()  # warm: imports, plans, caches
        start = time.perf_counter()
        fn()
        once = time.perf_counter() - start
        inner[name] = max(1, min(20000, int(block_s / max(once, 1e-7))))
    best = dict.fromkeys(candidates, math.inf)
    names = list(candidates)
    for r in range(rounds):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            fn, k = candidates[name], inner[name]
            start = time.perf_counter()
            for _ in range(k):
                fn()
            best[name] = min(best[name], (time.perf_counter() - start) / k)
    return best


def us(seconds: float) -> str:
    value = seconds * 1e6
    return f"{value:.1f}" if value < 100 else f"{value:.0f}"


def table(header: list[str], rows: list[list[str]]) -> None:
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join("---:" for _ in header) + "|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    print()


def machine() -> None:
    cpu = ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            cpu = next(
                (ln.split(":", 1)[1].strip() for ln in fh if ln.startswith("model name")), ""
            )
    except OSError:
        pass
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(f"- host: {cpu or platform.processor()} ({usable} usable CPUs), {platform.platform()}")
    print(
        f"- Python {platform.python_version()}, NumPy {np.__version__}, SciPy {scipy.__version__}"
    )
    for pool in workers.blas_pools():
        print(
            f"- BLAS of {pool['of']}: {pool.get('internal_api')} {pool.get('version')}, "
            f"{pool.get('num_threads')} threads ({os.path.basename(str(pool.get('filepath')))})"
        )
    choice = workers.fft_workers()
    print(f"- FFT workers: {choice.workers} (from {choice.as_dict()})")
    if hasattr(os, "getloadavg"):
        print(f"- load average at start: {os.getloadavg()[0]:.2f}")
    print()


# -- convolve -------------------------------------------------------------------------------------


def bench_convolve(rounds: int, quick: bool) -> None:
    print("## convolve: NumPy's direct sum against FFT convolution (float64)\n")
    rng = np.random.default_rng(1)
    longs = (1024, 4096, 16384) if quick else (256, 1024, 4096, 16384, 65536, 262144)
    shorts = (16, 64, 256) if quick else (8, 16, 32, 64, 128, 256, 512, 1024, 4096)
    rows, agree, total = [], 0, 0
    crossover: dict[int, int | None] = {}
    for n in longs:
        crossover[n] = None
        for m in shorts:
            if m > n or n * m > 1 << 28:  # NumPy would take a second a call
                continue
            a, v = rng.normal(size=n), rng.normal(size=m)
            t = race(
                {
                    "numpy": lambda a=a, v=v: np.convolve(a, v),
                    "fftconvolve": lambda a=a, v=v: signal.fftconvolve(a, v),
                    "oaconvolve": lambda a=a, v=v: signal.oaconvolve(a, v),
                    "plugin": lambda a=a, v=v: ops.convolve(a, v),
                },
                rounds,
            )
            fastest_fft = min(t["fftconvolve"], t["oaconvolve"])
            wins = t["plugin"] < t["numpy"]
            if wins and crossover[n] is None:
                crossover[n] = m
            takes = variants.takes_convolve(a, v) is True
            right = takes == wins or abs(t["plugin"] / t["numpy"] - 1) < 0.1
            agree += right
            total += 1
            rows.append(
                [
                    str(n),
                    str(m),
                    us(t["numpy"]),
                    us(t["fftconvolve"]),
                    us(t["oaconvolve"]),
                    us(t["plugin"]),
                    f"{t['numpy'] / t['plugin']:.2f}",
                    "oa" if t["oaconvolve"] <= t["fftconvolve"] else "fft",
                    f"{t['numpy'] / fastest_fft:.2f}",
                    ("yes" if takes else "no") + ("" if right else " (wrong)"),
                ]
            )
    table(
        [
            "N (long)",
            "M (short)",
            "numpy us",
            "fftconvolve us",
            "oaconvolve us",
            "plugin us",
            "numpy/plugin",
            "faster FFT",
            "numpy/best FFT",
            "can_run takes it",
        ],
        rows,
    )
    print(
        "Smallest M where the plugin beats NumPy, per N: "
        + ", ".join(f"N={n}: {m if m is not None else 'none'}" for n, m in crossover.items())
    )
    print(
        f"\ncan_run (CONVOLVE_MIN_SHORT={variants.CONVOLVE_MIN_SHORT}, "
        f"CONVOLVE_MIN_SIZE=2**{variants.CONVOLVE_MIN_SIZE.bit_length() - 1}, "
        f"CONVOLVE_OA_RATIO={ops.CONVOLVE_OA_RATIO}) decides right (or within 10%) in "
        f"{agree} of {total} configurations.\n"
    )


# -- FFT ------------------------------------------------------------------------------------------


def bench_fft(rounds: int, quick: bool) -> None:
    print("## fft.fft of one signal: numpy.fft against scipy.fft (complex128)\n")
    rng = np.random.default_rng(2)
    rows = []
    for k in range(4, 21, 4 if quick else 2):
        x = rng.normal(size=1 << k) + 1j * rng.normal(size=1 << k)
        t = race(
            {
                "numpy": lambda x=x: np.fft.fft(x),
                "scipy": lambda x=x: sfft.fft(x),
                "plugin": lambda x=x: ops.fft_fft(x),
            },
            rounds,
        )
        rows.append(
            [
                f"2^{k}",
                us(t["numpy"]),
                us(t["scipy"]),
                us(t["plugin"]),
                f"{t['numpy'] / t['plugin']:.2f}",
            ]
        )
    table(["n", "numpy us", "scipy.fft us", "plugin us", "numpy/plugin"], rows)


def bench_workers(rounds: int, quick: bool) -> None:
    w = workers.fft_workers().workers
    print(f"## fft.fft of a batch (rows of a 2-D array): workers=1 against workers={w}\n")
    rng = np.random.default_rng(3)
    rows = []
    shapes = (
        [(64, 64), (16, 4096), (256, 1024)]
        if quick
        else [
            (4, 64),
            (16, 64),
            (64, 64),
            (128, 128),
            (256, 128),
            (64, 1024),
            (256, 1024),
            (16, 16384),
            (1024, 1024),
            (64, 16384),
        ]
    )
    for rows_, n in shapes:
        x = rng.normal(size=(rows_, n)) + 1j * rng.normal(size=(rows_, n))
        t = race(
            {
                "numpy": lambda x=x: np.fft.fft(x),
                "w1": lambda x=x: sfft.fft(x, workers=1),
                "wN": lambda x=x, w=w: sfft.fft(x, workers=w),
                "plugin": lambda x=x: ops.fft_fft(x),
            },
            rounds,
        )
        rows.append(
            [
                f"{rows_} x {n}",
                str(rows_ * n),
                us(t["numpy"]),
                us(t["w1"]),
                us(t["wN"]),
                f"{t['w1'] / t['wN']:.2f}",
                str(workers.workers_for(rows_, n)),
                us(t["plugin"]),
                f"{t['numpy'] / t['plugin']:.2f}",
            ]
        )
    table(
        [
            "batch",
            "elements",
            "numpy us",
            "workers=1 us",
            f"workers={w} us",
            "speed-up",
            "plugin's workers",
            "plugin us",
            "numpy/plugin",
        ],
        rows,
    )
    print(f"PARALLEL_MIN_ELEMENTS = {workers.PARALLEL_MIN_ELEMENTS}\n")


# -- solve ----------------------------------------------------------------------------------------


def _spd(rng: np.random.Generator, n: int) -> np.ndarray:
    g = rng.normal(size=(n, n))
    a = g @ g.T + n * np.eye(n)
    return (a + a.T) / 2  # exactly symmetric


def bench_solve(rounds: int, quick: bool) -> None:
    print("## linalg.solve: LU (gesv, NumPy's) against Cholesky (posv) where it applies\n")
    rng = np.random.default_rng(4)
    rows = []
    from scipy.linalg import lapack

    for n in (8, 32, 128, 512) if quick else (4, 8, 16, 32, 64, 96, 128, 256, 512, 1024):
        general = rng.normal(size=(n, n)) + n * np.eye(n)
        spd = _spd(rng, n)
        b = rng.normal(size=(n, 4))
        gesv = lapack.get_lapack_funcs("gesv", (spd, b))
        posv = lapack.get_lapack_funcs("posv", (spd, b))
        t = race(
            {
                "np-general": lambda a=general, b=b: np.linalg.solve(a, b),
                "plugin-general": lambda a=general, b=b: ops.linalg_solve(a, b),
                "np-spd": lambda a=spd, b=b: np.linalg.solve(a, b),
                "plugin-spd": lambda a=spd, b=b: ops.linalg_solve(a, b),
                "gesv-spd": lambda a=spd, b=b, f=gesv: f(a, b),
                "posv-spd": lambda a=spd, b=b, f=posv: f(a, b),
                "look-general": lambda a=general: ops.maybe_positive_definite(a),
                "look-spd": lambda a=spd: ops._hermitian(a),
                "array_equal-spd": lambda a=spd: np.array_equal(a, a.T),
            },
            rounds,
        )
        rows.append(
            [
                str(n),
                us(t["np-general"]),
                us(t["plugin-general"]),
                f"{t['np-general'] / t['plugin-general']:.2f}",
                us(t["np-spd"]),
                us(t["plugin-spd"]),
                f"{t['np-spd'] / t['plugin-spd']:.2f}",
                us(t["gesv-spd"]),
                us(t["posv-spd"]),
                us(t["look-general"]),
                us(t["look-spd"]),
                us(t["array_equal-spd"]),
                "posv" if n >= ops.CHOLESKY_MIN_N else "gesv",
            ]
        )
    table(
        [
            "n",
            "numpy general",
            "plugin general",
            "ratio",
            "numpy SPD",
            "plugin SPD",
            "ratio",
            "gesv SPD",
            "posv SPD",
            "look, general",
            "symmetry check, SPD",
            "array_equal(a, a.T)",
            "plugin's driver for SPD",
        ],
        rows,
    )
    print(f"Times in us, 4 right-hand sides. CHOLESKY_MIN_N = {ops.CHOLESKY_MIN_N}\n")


# -- the other linear algebra ---------------------------------------------------------------------


def bench_linalg(rounds: int, quick: bool) -> None:
    print("## matmul, inv, svd, eigh, eig: NumPy against the plugin (float64)\n")
    rng = np.random.default_rng(5)
    rows = []
    for n in (8, 64, 256) if quick else (4, 16, 64, 128, 256, 512):
        a = rng.normal(size=(n, n))
        b = rng.normal(size=(n, n))
        h = a + a.T
        pairs: dict[str, tuple[Callable[[], Any], Callable[[], Any]]] = {
            "matmul": (lambda a=a, b=b: np.matmul(a, b), lambda a=a, b=b: ops.matmul(a, b)),
            "inv": (lambda a=a: np.linalg.inv(a), lambda a=a: ops.linalg_inv(a)),
            "svd": (lambda a=a: np.linalg.svd(a), lambda a=a: ops.linalg_svd(a)),
            "eigh": (lambda h=h: np.linalg.eigh(h), lambda h=h: ops.linalg_eigh(h)),
            "eig": (lambda a=a: np.linalg.eig(a), lambda a=a: ops.linalg_eig(a)),
        }
        if n >= 512 and quick:
            pairs.pop("eig")
        row = [str(n)]
        for _name, (reference, plugin) in pairs.items():
            t = race({"numpy": reference, "plugin": plugin}, rounds)
            row.append(f"{us(t['numpy'])} / {us(t['plugin'])} ({t['numpy'] / t['plugin']:.2f})")
        rows.append(row)
    table(["n", *(f"{op}: numpy / plugin us (ratio)" for op in pairs)], rows)


SECTIONS = {
    "convolve": bench_convolve,
    "fft": bench_fft,
    "workers": bench_workers,
    "solve": bench_solve,
    "linalg": bench_linalg,
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sections", nargs="*", metavar="SECTION", help=", ".join(SECTIONS))
    parser.add_argument("--quick", action="store_true", help="fewer sizes and rounds")
    parser.add_argument("--rounds", type=int, default=None, help="interleaved rounds (15)")
    parser.add_argument(
        "--blas-threads",
        type=int,
        default=None,
        metavar="N",
        help="limit NumPy's and SciPy's BLAS to N threads (threadpoolctl) for the whole run",
    )
    args = parser.parse_args(argv)
    unknown = [s for s in args.sections if s not in SECTIONS]
    if unknown:
        parser.error(f"unknown section {unknown[0]!r}; choose among {', '.join(SECTIONS)}")
    rounds = args.rounds or (5 if args.quick else 15)
    print(f"# scipy plugin crossover ({time.strftime('%Y-%m-%d')})\n")
    print(f"`{' '.join([os.path.basename(sys.executable), *sys.argv])}`\n")
    import scipy.linalg  # noqa: F401 - load SciPy's BLAS, so that a limit applies to it too

    limit = (
        threadpoolctl.threadpool_limits(limits=args.blas_threads, user_api="blas")
        if args.blas_threads
        else contextlib.nullcontext()
    )
    with limit:
        machine()
        for name in args.sections or list(SECTIONS):
            SECTIONS[name](rounds, args.quick)
    if hasattr(os, "getloadavg"):
        print(f"load average at the end: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
