"""``prism tune`` and ``prism bench`` (prism_core/_bench.py), run as real subprocesses with the
installed plugins found through their entry points.

Budgets are tiny so that the suite stays quick: what is checked is what the commands report
and store, never how fast anything is.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from .virtual_clock import VirtualClock

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
    tuned = prism(tmp_path, "tune", "add", "--sizes", "16,4096", "--budget", "10", "--json")
    assert tuned.returncode == 0, tuned.stderr
    (report,) = json.loads(tuned.stdout)
    assert [c["shapes"] for c in report["cases"]] == [[[16], [16]], [[4096], [4096]]]
    for case in report["cases"]:
        assert case["dtype"] == "fp64"
        assert case["decided"] in {"measured", "tie", "only"}
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
        tmp_path, "bench", "--ops", "add,matmul", "--dtypes", "float64", "--budget", "30",
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
        assert r["decided_by"] in {"measured", "tie", "declared"}
        assert r["prism_s"] > 0 and r["oracle_s"] > 0
        assert r["prism_vs_oracle"] == pytest.approx(r["prism_s"] / r["oracle_s"])
    assert report["summary"]["prism_vs_oracle"] > 0
    assert report["host"]["devices"][0]["device_type"].startswith("generic.")
    assert "numpy" in report["host"]["backends"]
    shown = json.loads(prism(tmp_path, "tune", "--show", "--json").stdout)
    assert len(shown["entries"]) == report["stored"]


def test_bench_table(tmp_path: Path) -> None:
    proc = prism(tmp_path, "bench", "--ops", "add", "--dtypes", "float32", "--budget", "30")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "Prism picks" in out and "vs fastest" in out and "vs NumPy" in out
    assert "geometric mean: Prism" in out
    assert out.count("\nadd ") == 2


def test_bench_plot(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib", reason="--plot needs matplotlib (the [plot] extra)")
    figure = tmp_path / "bench.svg"
    proc = prism(
        tmp_path, "bench", "--ops", "add", "--dtypes", "float64", "--budget", "30",
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
    ("target", "message"),
    [
        ("missing/x.png", "--plot: missing/x.png: the directory missing does not exist"),
        ("x.xyz", "--plot: x.xyz: matplotlib writes no '.xyz' figure; end the name in one of "),
    ],
)
def test_a_plot_target_that_cannot_be_written_is_refused_before_measuring(
    tmp_path: Path, target: str, message: str
) -> None:
    pytest.importorskip("matplotlib", reason="--plot needs matplotlib (the [plot] extra)")
    proc = subprocess.run(
        [sys.executable, "-m", "prism_core", "bench", "--ops", "add", "--dtypes", "float64",
         "--budget", "2", "--no-store", "--plot", target],
        env=_twin_env(tmp_path), cwd=tmp_path, capture_output=True, text=True, timeout=280,
        check=False,
    )  # fmt: skip
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"prism bench: error: {message}" in proc.stderr
    if target.endswith(".xyz"):
        assert ".png, " in proc.stderr and ".svg" in proc.stderr and ".pdf" in proc.stderr
    assert "internal error" not in proc.stderr and "Traceback" not in proc.stderr
    assert "tuning add" not in proc.stderr and proc.stdout == ""  # nothing was measured


def test_a_plot_into_a_directory_is_a_named_file_there(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib", reason="--plot needs matplotlib (the [plot] extra)")
    (tmp_path / "figures").mkdir()
    proc = subprocess.run(
        [sys.executable, "-m", "prism_core", "bench", "--ops", "add", "--dtypes", "float64",
         "--budget", "2", "--no-store", "--plot", "figures"],
        env=_twin_env(tmp_path), cwd=tmp_path, capture_output=True, text=True, timeout=280,
        check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    written = tmp_path / "figures" / "prism-bench.png"
    assert written.read_bytes().startswith(b"\x89PNG")
    assert f"plot: {Path('figures', 'prism-bench.png')}\n" in proc.stdout
    assert not (tmp_path / "figures.png").exists()


#: ``prism`` whose figure cannot be written once everything is measured (the disk filled up).
FULL_DISK = """
import sys
import prism_core._bench_plot as bench_plot

def plot(report, path):
    raise OSError(28, "No space left on device")

bench_plot.plot = plot
from prism_core._cli import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.parametrize("json_", [False, True], ids=["table", "json"])
def test_a_figure_that_cannot_be_written_loses_no_table(tmp_path: Path, json_: bool) -> None:
    pytest.importorskip("matplotlib", reason="--plot needs matplotlib (the [plot] extra)")
    proc = subprocess.run(
        [sys.executable, "-c", FULL_DISK, "bench", "--ops", "add", "--dtypes", "float64",
         "--budget", "2", "--no-store", "--plot", "x.png", *(["--json"] if json_ else [])],
        env=_twin_env(tmp_path), cwd=tmp_path, capture_output=True, text=True, timeout=280,
        check=False,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stdout + proc.stderr
    if json_:
        assert len(json.loads(proc.stdout)["rows"]) == 2
    else:
        assert "geometric mean: Prism" in proc.stdout and "plot: " not in proc.stdout
    assert "prism bench: error: --plot: x.png was not written: " in proc.stderr
    assert "No space left on device" in proc.stderr
    assert "internal error" not in proc.stderr and "Traceback" not in proc.stderr


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


# -- where the tuned choices go: failures said, interrupts survived -----------------------------

#: ``prism`` with a second variant of ``add`` (so that every case has a choice to store,
#: whatever backends are installed) that blocks, until interrupted, on arrays of
#: ``sys.argv[1]`` elements or more (0: never); the command line follows.
TWIN = """
import signal, sys, time
import numpy as np
from prism_core.kernel.dispatch.ops import get_op

BLOCK = int(sys.argv[1])

def twin(a, b):
    if BLOCK and a.size >= BLOCK:
        time.sleep(3600)  # only an interrupt ends this case
    return np.add(a, b)

get_op("add").variant(twin, name="tests.add_twin", priority=-1)
# Ctrl-C raises KeyboardInterrupt even where the test runner was started with SIGINT ignored
# (a background job of a shell), which Python would inherit.
signal.signal(signal.SIGINT, signal.default_int_handler)
from prism_core._cli import main
sys.exit(main(sys.argv[2:]))
"""


def _twin_env(cache: Path) -> dict[str, str]:
    # The builtin plugins only: the same host file whatever else is installed, and quick.
    return {**_env(cache), "PRISM_DISABLE_PLUGIN_AUTOLOAD": "1"}


def twin(cache: Path, *args: str, block: int = 0) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [sys.executable, "-c", TWIN, str(block), *args],
        env=_twin_env(cache), capture_output=True, text=True, timeout=280, check=False,
    )  # fmt: skip
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stderr
    return proc


def _cache_file(cache: Path) -> Path:
    """This host's tuning file under ``cache`` (as the commands above see it)."""
    shown = twin(cache, "tune", "--show", "--json")
    assert shown.returncode == 0, shown.stderr
    return Path(json.loads(shown.stdout)["path"])


def _path_is_a_directory(cache: Path) -> Path:
    path = _cache_file(cache)
    path.mkdir(parents=True)
    return path


def _parent_is_a_file(cache: Path) -> Path:
    blocker = cache / "tuning"
    blocker.write_text("not a directory")
    return blocker


def _lock_is_a_directory(cache: Path) -> Path:
    lock = _cache_file(cache).with_suffix(".json.lock")
    lock.mkdir(parents=True)
    return lock


BLOCKED = {
    "the file's path is a directory": _path_is_a_directory,
    "the directory's path is a file": _parent_is_a_file,
    "the lock's path is a directory": _lock_is_a_directory,
}


@pytest.mark.parametrize("block", list(BLOCKED.values()), ids=list(BLOCKED))
def test_tune_says_what_it_could_not_store_and_fails(
    tmp_path: Path, block: Callable[[Path], Path]
) -> None:
    blocker = block(tmp_path)
    proc = twin(tmp_path, "tune", "add", "--sizes", "16,1024", "--budget", "2")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    # The measurements are printed all the same: nothing measured is lost from sight.
    assert "add fp64 [16 16]: " in proc.stdout and "add fp64 [1024 1024]: " in proc.stdout
    assert "tests.add_twin" in proc.stdout
    assert "0 of 2 tuned choice(s) stored in " in proc.stdout
    assert "2 not stored, kept for this process only" in proc.stdout
    problems = [line for line in proc.stdout.splitlines() if line.startswith("problem: ")]
    assert any(str(blocker) in line for line in problems), problems  # what is at fault
    assert "prism tune: error: 2 tuned choice(s) could not be stored in " in proc.stderr
    assert blocker.exists()  # left as it was


def test_tune_json_says_what_it_could_not_store(tmp_path: Path) -> None:
    _parent_is_a_file(tmp_path)
    proc = twin(tmp_path, "tune", "add", "--sizes", "16", "--budget", "2", "--json")
    assert proc.returncode == 1, proc.stderr
    (report,) = json.loads(proc.stdout)
    assert (report["stored"], report["unstored"]) == (0, 1)
    assert report["problems"] and len(report["cases"]) == 1
    assert "could not be stored" in proc.stderr


def _unwritable(directory: Path) -> None:
    """Make ``directory`` read-only, or skip the test where that does not stop writing."""
    if os.name != "posix" or os.geteuid() == 0:
        pytest.skip("root (or a non-POSIX system) writes into a read-only directory anyway")
    directory.chmod(0o555)
    probe = directory / "probe"
    try:
        probe.write_text("")
    except OSError:
        return
    probe.unlink()
    directory.chmod(0o755)
    pytest.skip(f"chmod 555 does not make {directory} read-only on this file system")


def test_tune_into_a_read_only_directory_fails(tmp_path: Path) -> None:
    directory = _cache_file(tmp_path).parent
    directory.mkdir(parents=True)
    _unwritable(directory)
    try:
        proc = twin(tmp_path, "tune", "add", "--sizes", "16", "--budget", "2")
    finally:
        directory.chmod(0o755)
    assert proc.returncode == 1, proc.stderr
    assert "0 of 1 tuned choice(s) stored" in proc.stdout
    assert "could not be stored" in proc.stderr
    assert list(directory.iterdir()) == []


def test_bench_says_what_it_could_not_store_and_fails(tmp_path: Path) -> None:
    path = _path_is_a_directory(tmp_path)
    proc = twin(tmp_path, "bench", "--ops", "add", "--dtypes", "float64", "--budget", "30")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "geometric mean: Prism" in proc.stdout  # the measurements are all printed
    assert "stored 0 of 2 tuned choice(s) in " in proc.stdout
    assert f"problem: {path}" in proc.stdout
    assert "prism bench: error: 2 tuned choice(s) " in proc.stderr
    assert " could not be stored in " in proc.stderr
    assert "stored 2 tuned choice(s)" not in proc.stdout
    with_json = twin(
        tmp_path, "bench", "--ops", "add", "--dtypes", "float64", "--budget", "30", "--json"
    )
    assert with_json.returncode == 1
    report = json.loads(with_json.stdout)
    assert (report["stored"], report["unstored"]) == (0, 2)


def _tuned_file(cache: Path) -> Path:
    stored = twin(cache, "tune", "add", "--sizes", "16", "--budget", "2")
    assert stored.returncode == 0, stored.stderr
    path = _cache_file(cache)
    assert path.is_file()
    return path


@pytest.mark.parametrize("where", ["the file's path is a directory", "the lock is a directory"])
def test_a_clear_that_fails_says_so_and_fails(tmp_path: Path, where: str) -> None:
    if where == "the lock is a directory":
        path = _tuned_file(tmp_path)
        lock = path.with_suffix(".json.lock")
        lock.unlink(missing_ok=True)  # the lock file a lock leaves behind
        lock.mkdir()
    else:
        path = _path_is_a_directory(tmp_path)
    proc = twin(tmp_path, "tune", "--clear")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert f"prism tune: error: {path} was not cleared" in proc.stderr
    assert "removed" not in proc.stdout
    assert path.exists()


def test_a_clear_with_nothing_to_clear_succeeds(tmp_path: Path) -> None:
    proc = twin(tmp_path, "tune", "--clear")
    assert proc.returncode == 0, proc.stderr
    assert "removed 0 tuned choice(s)" in proc.stdout


def _entries(path: Path) -> list[dict[str, Any]]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    found: list[dict[str, Any]] = json.loads(text)["entries"]  # replaced whole, never half
    return found


@pytest.mark.skipif(os.name != "posix", reason="SIGINT is sent with os.kill on POSIX only")
@pytest.mark.parametrize(
    ("command", "finished"),
    [
        # The third size blocks until interrupted: the first two are finished and stored.
        (("tune", "add", "--sizes", "16,1024,65536", "--budget", "60"), [6, 12]),
        # prism bench's quick sizes of add: 1024 is finished and stored, 2**20 blocks.
        (("bench", "--ops", "add", "--dtypes", "float64", "--budget", "60"), [12]),
    ],
    ids=["tune", "bench"],
)
@pytest.mark.timeout(240)
def test_an_interrupt_keeps_every_finished_case(
    tmp_path: Path, command: tuple[str, ...], finished: list[int]
) -> None:
    path = _cache_file(tmp_path)
    block = 65536 if command[0] == "tune" else 1 << 20
    proc = subprocess.Popen(
        [sys.executable, "-c", TWIN, str(block), *command],
        env=_twin_env(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        # Wait (for as long as it takes, up to a generous limit) for the finished cases to be
        # stored: the last case never ends by itself.
        deadline = time.monotonic() + 180
        while len(_entries(path)) < len(finished) and proc.poll() is None:
            if time.monotonic() > deadline:
                break
            time.sleep(0.1)
        stored_before = [e["bucket"] for e in _entries(path)]
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert stored_before == finished, f"the finished cases were not stored: {err}"
    assert proc.returncode == 130, out + err
    assert "Traceback" not in out + err
    assert f"prism {command[0]}: interrupted; " in err
    assert str(path) in err
    assert [e["bucket"] for e in _entries(path)] == finished
    assert not list(path.parent.glob("*.tmp"))  # no half-written file left behind


@pytest.fixture
def add_twin() -> Iterator[str]:
    """A second variant of the catalogue's ``add``, in this process."""
    from prism_core.kernel.dispatch.ops import get_op
    from prism_core.kernel.dispatch.registry import remove_variants

    name = "tests.add_twin"
    get_op("add").variant(lambda a, b: a + b, name=name, priority=-1)
    yield name
    remove_variants(lambda v: v.name == name)


def test_bench_interrupted_keeps_the_cases_already_tuned(add_twin: str) -> None:
    from prism_core._bench import run_bench
    from prism_core._tuning.tuning_records import TuningStore

    def progress(done: int, total: int, label: str) -> None:
        if done == 1:  # add on 1024 elements is tuned: Ctrl-C before 2**20
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_bench(ops=["add"], dtypes=["float64"], budget_s=2, progress=progress)
    (kept,) = TuningStore().load().entries
    assert (kept.op, kept.bucket) == ("add", 12)


#: Two ops a plugin could declare, with their example arguments (one of them batches), in a
#: group; then ``prism`` with the command line's arguments.  Only their references run.
DECLARED = """
import os, sys
os.environ["PRISM_DISABLE_PLUGIN_AUTOLOAD"] = "1"
import numpy as np
import prism_core
from prism_core._cli import main
from prism_core.backend_kit import Examples

def make(n, dtype, batch):
    return (np.arange(n * (batch or 1), dtype=np.int32),)

shared = dict(
    make=make, nbytes=lambda n, dtype, batch: 4 * n * (batch or 1),
    size="n x batch integers", axis="n", dtype_label="ints", group="demo.all",
    cells=lambda args: int(args[0].shape[0]), model_dtype="int32",
    install="demo-faster (faster totals)",
)

@prism_core.extending.operation(
    name="demo.total", examples=Examples(quick=(8, 64), full=(8,), **shared)
)
def total(x):
    return int(x.sum())

@prism_core.extending.operation(
    name="demo.totals", examples=Examples(quick=[(8, 4)], full=[(8, 4)], batch=2, **shared)
)
def totals(x):
    return int(x.sum())

sys.exit(main(sys.argv[1:]))
"""


def test_bench_measures_the_ops_a_plugin_declares_with_their_examples(tmp_path: Path) -> None:
    """An op carries its example arguments (``operation(..., examples=Examples(...))``): the
    bench measures it when named by its group, over its sizes, with its dtype column's word
    and its cell updates; with its reference alone, a note names what its examples say to
    install.  ``prism tune --sizes`` makes its arguments the same way."""
    done = prism(tmp_path, "bench", "demo.all", "--no-store", "--json", "--budget", "60",
                 code=DECLARED)  # fmt: skip
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert [(r["op"], r["dtype"], r["n"], r["batch"], r["cells"]) for r in data["rows"]] == [
        ("demo.total", "ints", 8, None, 8),
        ("demo.total", "ints", 64, None, 64),
        ("demo.totals", "ints", 8, 4, 32),
    ]
    for row in data["rows"]:
        assert row["oracle"] == row["prism_picks"] == f"{row['op']}.reference"
        assert row["prism_gcups"] and row["prism_gcups"] > 0
    (note,) = data["notes"]
    assert "demo.total (demo.total.reference), demo.totals" in note
    assert note.endswith("install demo-faster (faster totals)")

    table = prism(tmp_path, "bench", "demo.totals", "--no-store", "--budget", "30",
                  code=DECLARED)  # fmt: skip
    assert table.returncode == 0, table.stderr
    assert "demo.totals  ints   8 x 4" in table.stdout
    unknown = prism(tmp_path, "bench", "demo.al", "--no-store", code=DECLARED)
    assert unknown.returncode == 1
    assert "demo.al not benchmarked; choose among" in unknown.stderr
    assert "demo.all, demo.total, demo.totals" in unknown.stderr

    tuned = prism(tmp_path, "tune", "demo.totals", "--sizes", "16", "--dtypes",
                  "float32,float64", "--budget", "10", "--json", code=DECLARED)  # fmt: skip
    assert tuned.returncode == 0, tuned.stderr
    (report,) = json.loads(tuned.stdout)
    # Its examples fix the types: one case per size, the default batch of 2.
    assert [c["shapes"] for c in report["cases"]] == [[[32]]]


def test_a_row_that_could_not_be_timed_says_why(add_twin: str) -> None:
    """The budget ran out before the row's check: its cells are empty, and the note says why."""
    from prism_core import _bench
    from prism_core._tuning.tune_report import TuneCase
    from prism_core.kernel.dispatch.explain import explain

    args = _bench.example_arguments("add", 16, "float64")
    case = TuneCase("add", ((16,), (16,)), "fp64", 5, "cpu", (), "numpy.add", None, "failed")
    spent = time.perf_counter() - 1.0
    row = _bench._check("add", "float64", 16, args, case, explain, 0.01, spent, 5, False)
    assert (row.oracle, row.prism_s, row.verdict) == (None, None, None)
    out = "not timed: the time budget ran out"
    assert row.note == f"not timed (prism: {out}; numpy.add: {out}; {add_twin}: {out})"


# -- while it runs: the header at once, progress, a budget that caps, the machine's load ------


@pytest.mark.skipif(os.name != "posix", reason="SIGINT is sent with os.kill on POSIX only")
@pytest.mark.timeout(240)
def test_the_header_comes_first_and_each_step_says_where_it_is(tmp_path: Path) -> None:
    """The header is out before anything is measured, and each step is announced on stderr
    (plain lines: not a terminal) with the time left; here the second case never ends."""
    proc = subprocess.Popen(
        [sys.executable, "-c", TWIN, str(1 << 20), "bench", "--ops", "add", "--dtypes",
         "float64", "--budget", "600"],
        env=_twin_env(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert proc.stdout is not None and proc.stderr is not None
    try:
        header = [proc.stdout.readline() for _ in range(3)]
        steps = [proc.stderr.readline() for _ in range(2)]
        assert proc.poll() is None  # still measuring: blocked in the second case
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert header[0].startswith("devices: ") and "generic." in header[0]
    assert header[1].startswith("backends: numpy")
    assert header[2].startswith(("machine load: ", "machine busy: "))
    assert header[2].rstrip().endswith("; at most 600 s (--budget)")
    assert steps[0].startswith("prism bench: [1/4] tuning add float64 n=1024 (about ")
    assert steps[1].startswith("prism bench: [2/4] tuning add float64 n=1048576 (about ")
    assert steps[1].rstrip().endswith(" left)")


@pytest.fixture
def slow_twin(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[VirtualClock]:
    """A second variant of ``add`` that takes 50 ms a call on a virtual clock, which the tuner
    and the bench read instead of the real one."""
    import numpy as np

    from prism_core import _bench
    from prism_core._tuning import tuner
    from prism_core._tuning import tuning_records as tuning
    from prism_core.kernel.dispatch.ops import get_op
    from prism_core.kernel.dispatch.registry import remove_variants

    clock = VirtualClock()
    monkeypatch.setattr(tuner, "time", clock)
    monkeypatch.setattr(_bench, "time", clock)
    # Small arrays: NumPy's add takes real time, a virtual instant, so the tuner times it
    # over many calls per sample.
    monkeypatch.setitem(_bench.QUICK, "add", [16, 64])
    monkeypatch.setenv("PRISM_CACHE_DIR", str(tmp_path / "cache"))
    tuning.reload()

    def twin(a: Any, b: Any) -> Any:
        clock.advance(0.05)
        return np.add(a, b)

    get_op("add").variant(twin, name="tests.slow_twin", priority=-1)
    yield clock
    remove_variants(lambda v: v.name == "tests.slow_twin")
    tuning.reload()


def _quiet() -> Any:
    from prism_core._tuning.load import MachineLoad

    class Quiet(MachineLoad):
        def sample(self) -> float | None:
            self.samples.append(0.0)
            return 0.0

    return Quiet(look_s=0)


def test_a_budget_caps_the_whole_run(slow_twin: VirtualClock) -> None:
    from prism_core._bench import run_bench

    def spent(budget: float | None) -> tuple[float, Any]:
        began = slow_twin.perf_counter()
        report = run_bench(
            ops=["add"], dtypes=["float64"], budget_s=budget, store=False, load=_quiet()
        )
        return slow_twin.perf_counter() - began, report

    uncapped, _ = spent(None)
    capped, report = spent(0.5)
    assert uncapped > 1.0  # four steps of about 0.25 s each, at least 5 rounds of 50 ms
    # Within the cap, but for the calls under way when it was reached: a step stops taking
    # rounds at its share's end; the last warm-up call (50 ms) and sizing call may run over.
    assert capped <= 0.5 + 2 * 0.05 + 0.01
    assert report.budget_s == 0.5 and report.as_dict()["budget_s"] == 0.5


#: ``prism`` whose start-up (libraries imported, plugins found, the hardware detected) takes
#: a second, then the command line: a budget counts that second.
SLOW_START = """
import os, sys, time
os.environ["PRISM_DISABLE_PLUGIN_AUTOLOAD"] = "1"
import numpy as np
from prism_core._cli import main
from prism_core.kernel.dispatch.ops import get_op

get_op("add").variant(lambda a, b: np.add(a, b), name="tests.add_twin", priority=-1)
time.sleep(1.0)
sys.exit(main())  # as the program: the command started when _cli was imported
"""


def test_the_budget_counts_from_the_commands_start(tmp_path: Path) -> None:
    """Half a second of ``--budget`` is spent before the command reaches its first
    measurement: nothing is measured, both the table and the JSON say why, and the report
    accounts for the start-up."""
    out = "not timed: the time budget ran out"
    bench = ("bench", "--ops", "add", "--dtypes", "float64", "--budget", "0.5", "--no-store")
    report = json.loads(prism(tmp_path, *bench, "--json", code=SLOW_START).stdout)
    assert report["budget_s"] == 0.5
    assert report["start_up_s"] >= 1.0 and report["seconds"] >= report["start_up_s"]
    assert all(r["prism_s"] is None and r["times"] for r in report["rows"])
    assert all(set(r["errors"].values()) == {out} for r in report["rows"])
    table = prism(tmp_path, *bench, code=SLOW_START)
    assert table.returncode == 0, table.stderr
    assert f"empty cells of add float64 1024: not timed (prism: {out}; " in table.stdout
    took = table.stdout.splitlines()[-1]
    assert took.endswith("of it start-up; --budget 0.5 s, exceeded by " + took.split("by ")[-1])
    assert took.endswith(": the start-up alone took longer)")

    tune = ("tune", "add", "--sizes", "16", "--budget", "0.5")
    text = prism(tmp_path, *tune, code=SLOW_START)
    assert text.returncode == 0, text.stderr
    assert f"    numpy.add, tests.add_twin {out}" in text.stdout
    assert "failed" not in text.stdout
    assert text.stdout.splitlines()[-1].endswith(": the start-up alone took longer)")
    (cases,) = json.loads(prism(tmp_path, *tune, "--json", code=SLOW_START).stdout)
    (case,) = cases["cases"]
    assert {m["error"] for m in case["measurements"]} == {out}


def test_a_busy_machine_is_said_and_takes_more_rounds(slow_twin: VirtualClock) -> None:
    from prism_core._bench import run_bench
    from prism_core._tuning.load import MachineLoad

    class Busy(MachineLoad):
        def sample(self) -> float | None:
            self.samples.append(0.9)
            return 0.9

    quiet = run_bench(ops=["add"], dtypes=["float64"], store=False, load=_quiet())
    busy = run_bench(ops=["add"], dtypes=["float64"], store=False, load=Busy(look_s=0))
    assert {r.as_dict()["rounds"] for r in quiet.rows} == {5}
    assert all(r.as_dict()["rounds"] >= 10 and r.busy for r in busy.rows)
    assert not any(r.busy for r in quiet.rows)
    assert busy.as_dict()["load"]["busy"] and not quiet.as_dict()["load"]["busy"]
    assert busy.load is not None and busy.load.describe().startswith("machine busy: ")


def _row(prism: list[float], oracle: list[float]) -> Any:
    from prism_core._bench import PRISM, BenchRow
    from prism_core._tuning.measurements import Measurement
    from prism_core._tuning.tune_report import TuneCase

    def timed(name: str, backend: str, samples: list[float]) -> Measurement:
        return Measurement(name, backend, None, min(samples), sorted(samples)[2], tuple(samples))

    case = TuneCase("add", ((8,), (8,)), "fp64", 4, "cpu", (), "numpy.add", "numpy.add", "tie")
    check = (timed(PRISM, "", prism), timed("numpy.add", "numpy", oracle))
    return BenchRow("add", "float64", 8, case, check, "numpy.add", "tie")


def test_a_row_is_a_tie_where_its_interval_holds_one() -> None:
    from prism_core._bench import _versus

    tie = _row([1.00, 1.03, 0.99, 1.02, 1.01], [1.01, 1.00, 1.00, 1.00, 1.02])
    assert tie.verdict == "tie" and tie.oracle == "numpy.add"
    assert tie.oracle_s == 1.00 == tie.as_dict()["times"]["numpy.add"]
    assert _versus(tie) == "tie (±2%)"
    slower = _row([1.30, 1.32, 1.31, 1.29, 1.30], [1.0, 1.01, 1.0, 1.0, 1.02])
    assert slower.verdict == "slower"
    low, high = slower.interval or (0, 0)
    assert 1.27 < low <= high < 1.33
    assert _versus(slower) == "1.29x (±2%)"
    assert _row([1.0] * 3, [1.0] * 3).verdict is None  # too few rounds for an interval


def test_a_second_bench_reuses_what_is_stored_and_force_measures_again(tmp_path: Path) -> None:
    command = ("bench", "--ops", "add", "--dtypes", "float64", "--budget", "30", "--json")

    def bench(*more: str, **env: str) -> tuple[dict[str, Any], str]:
        proc = subprocess.run(
            [sys.executable, "-c", TWIN, "0", *command, *more],
            env={**_twin_env(tmp_path), **env}, capture_output=True, text=True, timeout=280,
            check=False,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        report: dict[str, Any] = json.loads(proc.stdout)
        return report, proc.stderr

    first, _ = bench()
    second, steps = bench()
    forced, _ = bench("--force")
    assert (first["stored"], first["reused"]) == (2, 0)
    assert (second["stored"], second["reused"]) == (0, 2)
    assert all(r["reused"] for r in second["rows"])
    assert "stored choice of add float64 n=1024" in steps
    assert "tuning add" not in steps
    assert all(r["prism_s"] for r in second["rows"])  # reused, and still checked
    assert (forced["stored"], forced["reused"]) == (2, 0)
    # Other thread settings: another fingerprint, so nothing stored applies.
    other, _ = bench(OMP_NUM_THREADS="1")
    assert other["reused"] == 0


def test_machine_load_counts_the_other_processes_share(monkeypatch: pytest.MonkeyPatch) -> None:
    from prism_core._tuning import load

    clock = VirtualClock()
    busy, own = iter([100.0, 100.0, 101.6, 103.0]), iter([10.0, 10.0, 10.2, 10.5])
    monkeypatch.setattr(load, "time", clock)
    monkeypatch.setattr(load, "_cpu_count", lambda: 4)
    monkeypatch.setattr(load, "_system_busy_seconds", lambda: next(busy))
    monkeypatch.setattr(load, "_own_seconds", lambda: next(own))
    meter = load.MachineLoad(look_s=0)
    assert meter.before == 0.0
    clock.advance(1.0)
    assert meter.sample() == pytest.approx(1.4 / 4, rel=1e-3)  # 1.6 s busy, 0.2 s of it ours
    clock.advance(1.0)
    assert meter.sample() == pytest.approx(1.1 / 4, rel=1e-3)
    assert meter.peak == pytest.approx(0.35, rel=1e-3)
    assert meter.as_dict()["busy"] is True
    assert meter.describe().startswith("machine busy: other processes used 0% of the 4 CPUs")


def test_progress_lines_say_the_step_and_the_time_left() -> None:
    import io

    from prism_core._tuning.progress import Progress

    out = io.StringIO()
    progress = Progress(out, "lines", prefix="prism tune: ", deadline=None)
    progress(0, 3, "add n=16 float64")
    progress(1, 3, "add n=1024 float64")
    progress(3, 3, "add")  # the end: nothing more to say
    first, second = out.getvalue().splitlines()
    assert first == "prism tune: [1/3] add n=16 float64"  # no estimate before a step is done
    assert second.startswith("prism tune: [2/3] add n=1024 float64 (about ")
    assert second.endswith(" s left)")
    silent = io.StringIO()
    Progress.auto(silent, lines=False)(0, 1, "x")
    assert silent.getvalue() == ""  # not a terminal, and no lines asked for
