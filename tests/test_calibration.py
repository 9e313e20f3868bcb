"""The calibration step (``prism bench --calibrate``, ``prism_core._tuning.calibration``) and the
model's use of it: the calibration's format (the host link each way, pageable and pinned), the
transfer term, the tuning cache that keeps it per host, and dispatch's modelled choices and
``explain`` with a calibration in force.  The figures the step measures on a real GPU are not
checked here (no GPU): test_calibration_recorded.py plays the step on an H100's record."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import prism_core as prism
import prism_core._tuning.tuning_records as tuning
from prism_core._cli import main
from prism_core._tuning import calibration as step
from prism_core._tuning.figures import check_calibration
from prism_core._tuning.model import PerformanceModel
from prism_core._tuning.op_work import Work
from prism_core._tuning.ranking import model_for
from prism_core._tuning.work import work_of

REPO = Path(__file__).resolve().parents[1]
GPU = "nvidia.h100-pcie"  # the simulated GPU of tests/simulated_gpu_plugin.py


def host_cpu() -> str:
    return prism.hardware.present_devices().devices[0].device_type


# -- the format ---------------------------------------------------------------------------------


def test_the_link_figures_each_way_are_calibration_keys() -> None:
    entry = {
        "h2d_gbs": 10.0, "d2h_gbs": 3.0, "h2d_pinned_gbs": 24.0, "d2h_pinned_gbs": 25.0,
        "launch_us": 8.0, "measured_at": 1.8e9, "backend": "torch 2.11.0",
    }  # fmt: skip
    assert check_calibration({GPU: entry}) == {GPU: entry}
    fig = PerformanceModel({GPU: entry}, host_device_type=None).figures(GPU)
    assert (fig.host_link_gbps, fig.host_link_d2h_gbps) == (10.0, 3.0)
    assert (fig.host_link_pinned_gbps, fig.host_link_pinned_d2h_gbps) == (24.0, 25.0)
    assert fig.calibrated_at == 1.8e9
    assert {"host_link_gbps", "host_link_d2h_gbps", "host_link_pinned_gbps", "launch_s"} <= set(
        fig.calibrated
    )
    assert fig.as_dict()["host_link_d2h_gbps"] == 3.0


def test_an_older_calibration_link_is_both_pageable_directions() -> None:
    fig = PerformanceModel({GPU: {"host_link_gbs": 4.0}}, host_device_type=None).figures(GPU)
    assert (fig.host_link_gbps, fig.host_link_d2h_gbps) == (4.0, 4.0)
    assert fig.sources["host_link_d2h_gbps"] == "calibrated"
    # Pinned memory was not measured: the description's link stands.
    described = PerformanceModel(host_device_type=None).figures(GPU)
    assert fig.host_link_pinned_gbps == described.host_link_gbps
    assert fig.sources["host_link_pinned_gbps"] == described.sources["host_link_gbps"]


def test_uncalibrated_every_direction_is_the_descriptions() -> None:
    fig = PerformanceModel(host_device_type=None).figures("nvidia.h100-sxm")
    assert fig.host_link_gbps == fig.host_link_d2h_gbps == fig.host_link_pinned_gbps == 64.0
    assert fig.calibrated == () and fig.calibrated_at is None
    cpu = PerformanceModel(host_device_type=None).figures("generic.x86-64-v3")
    assert cpu.host_link_gbps is None and cpu.host_link_d2h_gbps is None


@pytest.mark.parametrize(
    ("entry", "error", "named"),
    [
        ({"d2h_gbs": 0}, ValueError, r"\['d2h_gbs'\] must be a finite number > 0"),
        ({"h2d_pinned_gbs": "fast"}, TypeError, r"\['h2d_pinned_gbs'\] must be a number"),
        ({"measured_at": -1.0}, ValueError, r"\['measured_at'\] must be a finite number >= 0"),
        ({"backend": 3}, TypeError, r"\['backend'\] must be the name of what measured"),
        ({"d2h_gb": 1.0}, ValueError, r"\['d2h_gb'\]: unknown key"),
    ],
)
def test_a_malformed_link_figure_names_its_key(entry: Any, error: type, named: str) -> None:
    with pytest.raises(error, match=named):
        check_calibration({GPU: entry})


# -- the transfer term --------------------------------------------------------------------------


def test_arguments_go_at_the_host_to_device_rate_and_results_come_back_at_the_other() -> None:
    model = PerformanceModel({GPU: {"h2d_gbs": 8.0, "d2h_gbs": 2.0}}, host_device_type=None)
    n = 1024
    p = model.predict("matmul", ((n, n), (n, n)), "float32", GPU, on_device=False)
    into, back = 2 * n * n * 4, n * n * 4
    assert p.transfer_s == pytest.approx(into / 8e9 + back / 2e9)
    assert p.seconds == pytest.approx(p.device_s + p.transfer_s)
    on_device = model.predict("matmul", ((n, n), (n, n)), "float32", GPU)
    assert on_device.transfer_s == 0 and on_device.seconds == pytest.approx(p.device_s)


def test_work_that_does_not_split_its_bytes_moves_at_the_slower_direction() -> None:
    model = PerformanceModel({GPU: {"h2d_gbs": 8.0, "d2h_gbs": 2.0}}, host_device_type=None)
    p = model.predict_work(Work(0, 1e9), "fp32", GPU, on_device=False)
    assert p.transfer_s == pytest.approx(1e9 / 2e9)
    split = model.predict_work(Work(0, 1e9, out_bytes=2.5e8), "fp32", GPU, on_device=False)
    assert split.transfer_s == pytest.approx(7.5e8 / 8e9 + 2.5e8 / 2e9)


def test_the_builtin_work_says_which_bytes_are_results() -> None:
    matmul = work_of("matmul", ((64, 32), (32, 16)), 8)
    assert matmul is not None and (matmul.in_bytes, matmul.out_bytes) == (
        8 * (64 * 32 + 32 * 16),
        8 * 64 * 16,
    )
    fft = work_of("fft.fft", ((256,),), 4)  # a real input: a complex result twice its size
    assert fft is not None and (fft.in_bytes, fft.out_bytes) == (1024, 2048)
    add = work_of("add", ((10,), (10,)), 8)
    assert add is not None and (add.in_bytes, add.out_bytes) == (160, 80)
    assert add.as_dict()["out_bytes"] == 80
    # Not compared: the same work, said in more detail.
    assert Work(1, 2, out_bytes=1) == Work(1, 2)
    with pytest.raises(ValueError, match=r"out_bytes \(3\) is the results' part"):
        Work(1, 2, out_bytes=3)


# -- the tuning cache: this host's alone --------------------------------------------------------


def test_a_calibration_from_another_host_or_driver_is_never_read(tmp_path: Path) -> None:
    """Another host's file (here: this host with another GPU driver) sits in the same cache
    directory; this host's records have no calibration, and its file is left as it was."""
    here = tuning.host_fingerprint()
    other = tuning.Fingerprint.of({**here.components, "device.0": f"{GPU} GPU-sim driver 999.1"})
    assert other.digest != here.digest
    directory = tuning.default_store().directory
    slow = {GPU: {"h2d_gbs": 0.001, "d2h_gbs": 0.001, "measured_at": 1.0, "backend": "x"}}
    tuning.TuningStore(directory, other).record(calibration=slow)
    theirs = directory / f"{other.digest}.json"
    before = theirs.read_bytes()
    found = tuning.reload()
    assert found.calibration == {}
    assert model_for(found).figures(GPU).calibrated == ()
    assert theirs.read_bytes() == before  # neither read into this host's records nor moved
    assert sorted(p.name for p in directory.glob("*.json")) == [theirs.name]


def test_a_file_written_for_another_host_under_this_hosts_name_is_not_used() -> None:
    here = tuning.host_fingerprint()
    store = tuning.default_store()
    store.directory.mkdir(parents=True, exist_ok=True)
    document = {
        "format": tuning.FORMAT, "version": tuning.FORMAT_VERSION,
        "fingerprint": {**here.components, "cpu.brand": "another CPU"}, "digest": here.digest,
        "entries": [], "calibration": {GPU: {"h2d_gbs": 0.001}},
    }  # fmt: skip
    store.path.write_text(json.dumps(document))
    with pytest.warns(tuning.TuningCacheWarning, match="not this host's"):
        found = tuning.reload()
    assert found.calibration == {}


# -- the model uses it: dispatch and explain ----------------------------------------------------


def spec(n: int) -> prism.ArraySpec:
    return prism.ArraySpec((n, n), "float64")


def test_a_calibrated_slow_link_keeps_a_call_on_the_cpu_and_explain_says_why(
    simgpu: None,
) -> None:
    before = prism.explain("matmul", spec(2048), spec(2048))
    assert before.decided_by == "modelled" and before.chosen == "simgpu.matmul"
    assert "calibrated on this host" not in str(before)
    cpu = host_cpu()
    calibration = {
        GPU: {
            "h2d_gbs": 0.05, "d2h_gbs": 0.02, "launch_us": 9.0, "efficiency": {"matmul": 0.5},
            "measured_at": 1.8e9, "backend": "simgpu",
        },
        cpu: {"launch_us": 2.0, "efficiency": {"matmul": 0.8}, "measured_at": 1.8e9},
    }  # fmt: skip
    tuning.default_store().record(calibration=calibration)
    after = prism.explain("matmul", spec(2048), spec(2048))
    assert after.decided_by == "modelled" and after.chosen_backend == "numpy"
    text = str(after)
    assert "calibrated on this host: " in text
    assert f"{GPU} link 0.05 GB/s in, 0.02 GB/s back, launch 9 µs, matmul efficiency 0.5" in text
    assert f"{cpu} launch 2 µs, matmul efficiency 0.8" in text


def test_a_calibrated_fast_gpu_takes_a_size_the_description_kept_on_the_cpu(
    simgpu: None,
) -> None:
    small = 48
    assert prism.explain("matmul", spec(small), spec(small)).chosen_backend == "numpy"
    cpu = host_cpu()
    tuning.default_store().record(
        calibration={
            GPU: {"h2d_gbs": 50.0, "d2h_gbs": 50.0, "launch_us": 0.1},
            cpu: {"launch_us": 50.0, "efficiency": {"matmul": 0.01}},
        }
    )
    decision = prism.explain("matmul", spec(small), spec(small))
    assert decision.chosen == "simgpu.matmul"
    assert f"{cpu} launch 50 µs, matmul efficiency 0.01" in decision.basis.note


def test_a_policy_says_which_calibrated_figures_it_ranked_with(simgpu: None) -> None:
    tuning.default_store().record(
        calibration={GPU: {"h2d_gbs": 2.0, "d2h_gbs": 1.0, "efficiency": {"matmul": 0.5}}}
    )
    with prism.execution_policy(prism.ExecutionPolicy(priority="energy")):
        decision = prism.explain("matmul", spec(1024), spec(1024))
    assert decision.basis.note.startswith("policy energy")
    assert f"calibrated on this host: {GPU} link 2 GB/s in, 1 GB/s back, matmul efficiency 0.5" in (
        decision.basis.note
    )


# -- the step -----------------------------------------------------------------------------------


@pytest.fixture
def small_sizes(monkeypatch: pytest.MonkeyPatch) -> None:
    """The step at sizes that take microseconds (NumPy stands in for every device here)."""
    for kind in ("cpu", "accelerator"):
        monkeypatch.setitem(step.SIZES, kind, dict.fromkeys(step.OPS, (8, 16, 32)))
    monkeypatch.setattr(step, "LINK_BYTES", 1 << 16)


def test_the_step_calibrates_the_cpu_of_a_cpu_only_host(small_sizes: None) -> None:
    labels: list[str] = []
    report = step.calibrate_host(
        ops=["matmul", "add"], dtypes=["float64"], progress=labels.append, sample_s=0.001
    )
    (cpu,) = report.devices
    assert cpu.device_type == host_cpu() and cpu.backend == "numpy" and cpu.kind == "cpu"
    assert labels[0] == f"launch latency on {cpu.device_type}"
    assert len(labels) == step.steps(["matmul", "add"], ["float64"], 0)
    assert [(p.op, p.n) for p in cpu.points] == [
        (o, n) for o in ("matmul", "add") for n in (8, 16, 32)
    ]
    entry = report.calibration[cpu.device_type]
    assert entry["launch_us"] > 0 and entry["measured_at"] > 0
    assert entry["backend"] == f"numpy {np.__version__}"
    assert set(entry["efficiency"]) == {"matmul", "add", "matmul:fp64", "add:fp64"}
    assert not any(k in entry for k in step.LINK_NAMES)  # a CPU has no host link
    check_calibration(report.calibration)
    assert "launch" in report.lines()[0] and "matmul efficiency" in report.lines()[0]
    json.dumps(report.as_dict())


def test_the_step_measures_a_devices_link_and_says_what_it_could_not(
    simgpu: None, small_sizes: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.simulated_gpu_plugin import SimulatedGpuBackend

    # Pinned memory NumPy's arrays stand for: copied to the device, not back into.
    monkeypatch.setattr(
        SimulatedGpuBackend, "pinned_empty", lambda self, shape, dtype: np.empty(shape, dtype)
    )
    devices = step.devices_to_calibrate()
    assert [(d.device_type, b and b.name) for d, _, b in devices] == [
        (host_cpu(), None),
        (GPU, "simgpu"),
    ]
    report = step.calibrate_host(ops=["matmul", "add"], dtypes=["float32"], sample_s=0.001)
    gpu = next(d for d in report.devices if d.device_type == GPU)
    assert gpu.backend == "simgpu"
    for key in ("h2d_gbs", "d2h_gbs", "h2d_pinned_gbs", "launch_us"):
        assert gpu.figures[key] > 0
    assert "d2h_pinned_gbs" not in gpu.figures
    assert any(s.startswith("pinned copies back: ndarray from 'simgpu'") for s in gpu.skipped)
    # simgpu runs matmul only: its add is not measured, and says why.
    assert {p.op for p in gpu.points} == {"matmul"}
    assert any(s.startswith("add float32 n=8: ") for s in gpu.skipped)
    entry = report.calibration[GPU]
    assert entry["efficiency"]["matmul"] > 0 and entry["backend"] == f"simgpu {np.__version__}"
    assert "not measured: pinned copies back" in "\n".join(report.lines())


def test_the_step_keeps_what_it_did_not_measure_and_refuses_a_dtype_it_does_not() -> None:
    base = {host_cpu(): {"efficiency": {"linalg.svd": 0.25}}, "other.device": {"launch_us": 3.0}}
    report = step.calibrate_host(ops=[], dtypes=["float64"], base=base, sample_s=0.001)
    entry = report.calibration[host_cpu()]
    assert entry["efficiency"]["linalg.svd"] == 0.25 and entry["launch_us"] > 0
    assert report.calibration["other.device"] == {"launch_us": 3.0}
    with pytest.raises(ValueError, match="dtypes: 'int8'"):
        step.calibrate_host(dtypes=["int8"])


def test_prism_bench_runs_the_step_where_asked_and_stores_it(small_sizes: None) -> None:
    from prism_core._bench import run_bench

    report = run_bench(ops=["add"], dtypes=["float64"], budget_s=20)
    assert report.calibration_step is None  # a CPU-only host: the tuned times calibrate it
    report = run_bench(ops=["add"], dtypes=["float64"], budget_s=20, calibrate=True)
    assert report.calibration_step is not None
    stored = tuning.reload().calibration[host_cpu()]
    assert stored["measured_at"] > 0 and stored["launch_us"] > 0
    assert "add" in stored["efficiency"]
    assert report.as_dict()["calibration_step"]["devices"][0]["device_type"] == host_cpu()


def test_prism_bench_calibrate_alone_and_tune_show(
    small_sizes: None, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["bench", "--calibrate", "--ops", "add", "--dtypes", "float64"]) == 0
    out, err = capsys.readouterr()
    assert f"prism bench: [1/4] calibrating: launch latency on {host_cpu()}" in err
    assert out.splitlines()[0].startswith(f"{host_cpu()} (")
    assert "calibration stored in " in out and "; measured in " in out
    assert main(["tune", "--show"]) == 0
    shown, _ = capsys.readouterr()
    assert "calibration of the performance model (measured on this host):" in shown
    line = next(s for s in shown.splitlines() if s.startswith(f"  {host_cpu()} ("))
    assert f", numpy {np.__version__}): launch " in line and "add efficiency " in line
    assert main(["tune", "--show", "--json"]) == 0
    data = json.loads(capsys.readouterr()[0])
    assert data["calibration"][host_cpu()]["backend"].startswith("numpy ")
    assert main(["bench", "--calibrate", "--ops", "linalg.svd"]) == 2
    assert (
        "--calibrate measures matmul, fft.fft, linalg.solve, add; not linalg.svd"
        in (capsys.readouterr()[1])
    )


def test_tune_show_says_when_nothing_is_calibrated(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tune", "--show"]) == 0
    assert (
        "no calibration of the performance model (run `prism bench --calibrate`)"
        in (capsys.readouterr()[0])
    )


# -- the offload benchmark ----------------------------------------------------------------------


def test_bench_offload_dry_run_covers_the_ops_and_dtypes(tmp_path: Path) -> None:
    """``--simulate``: the script's own dry run, on this host without a GPU."""
    done = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "bench_offload.py"), "--simulate",
         "nvidia.h100-sxm", "--max-n", "16", "--rounds", "1", "--ops",
         "matmul,fft.fft,linalg.solve,add", "--dtypes", "float32,float64"],
        capture_output=True, text=True, timeout=120, check=False, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "| op | dtype | crossover measured | crossover modelled |" in done.stdout
    for op in ("matmul", "linalg.solve"):
        for dtype in ("float32", "float64"):
            assert f"| {op} | {dtype} | 8 |" in done.stdout
    assert "Model calibrated on this host: " in done.stdout
    wrong = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "bench_offload.py"), "--dtypes", "int8"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert "--dtypes: int8; choose among float32, float64" in wrong.stdout + wrong.stderr


# -- the plugins' pinned memory -----------------------------------------------------------------


def test_torch_pins_host_memory_only_where_it_has_a_cuda_device() -> None:
    torch = pytest.importorskip("torch", reason="the torch plugin's backend needs torch")
    from prism_plugin_torch.backend import TorchBackend
    from prism_plugin_torch.runtime import cuda_unavailable

    pinned = TorchBackend().pinned_empty((4, 2), "float32")
    if cuda_unavailable() is not None:
        assert pinned is None
    else:  # pragma: no cover - a host with a CUDA GPU
        assert pinned.is_pinned() and pinned.shape == (4, 2) and pinned.dtype == torch.float32


def test_cupy_pins_host_memory_only_where_cupy_runs() -> None:
    backend_module = pytest.importorskip("prism_plugin_cuda.backend")
    backend = backend_module.CudaBackend()
    pinned = backend.pinned_empty((4, 2), "float32")
    if not backend.availability():
        assert pinned is None
    else:  # pragma: no cover - a host with CuPy and a GPU
        assert isinstance(pinned, np.ndarray) and pinned.shape == (4, 2)


def test_the_step_stops_at_its_deadline_and_says_so() -> None:
    import time

    report = step.calibrate_host(
        ops=["add"], dtypes=["float64"], deadline=time.perf_counter(), sample_s=0.001
    )
    (cpu,) = report.devices
    assert cpu.points == []
    assert cpu.skipped == ["add float64 from n=4096 on: out of time (--budget)"]
    assert report.calibration[cpu.device_type]["launch_us"] > 0
