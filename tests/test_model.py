"""The performance model (prism_core._tuning.model) on the shipped device descriptions."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

import prism_core as prism
from prism_core._tuning import figures as model_module
from prism_core._tuning.figures import Figures
from prism_core._tuning.model import ModelError, PerformanceModel
from prism_core._tuning.op_work import Work
from prism_core._tuning.predictions import PerformanceTable, Prediction

WriteYaml = Callable[[str, str], Path]

N = 8192
H100_FP32 = 67e12  # hardware/nvidia/h100-sxm.yaml: peak_tflops.fp32
H100_BW = 3350e9  # memory_hierarchy global bandwidth_gbps
H100_LINK = 128e9 / 2  # host_link 128 GB/s both directions: 64 per direction
GPU_LAUNCH = 5e-6
CPU_LAUNCH = 1e-6


@pytest.fixture
def model() -> PerformanceModel:
    # No host: the host CPU's figures would depend on this machine.
    return PerformanceModel(host_device_type=None)


@pytest.fixture
def cpu8(write_yaml: WriteYaml) -> prism.hardware.DeviceDescription:
    """An 8-core x86-64-v3 CPU at 3 GHz, without peak_tflops or memory bandwidth."""
    path = write_yaml(
        "cpu8.yaml",
        """
        device_type: test.cpu8
        extends: generic.x86-64-v3
        compute_units: 8
        clock_mhz: {base: 3000}
        """,
    )
    return prism.hardware.load_device_file(path)


# -- the roofline on real descriptions ------------------------------------------------------------


def test_large_matmul_on_h100_is_compute_bound(model: PerformanceModel) -> None:
    p = model.predict("matmul", ((N, N), (N, N)), "float32", "nvidia.h100-sxm")
    compute = 2 * N**3 / H100_FP32
    memory = 3 * N * N * 4 / H100_BW
    assert p.compute_s == pytest.approx(compute, rel=1e-12)
    assert p.memory_s == pytest.approx(memory, rel=1e-12)
    assert p.seconds == pytest.approx(compute + GPU_LAUNCH, rel=1e-12)
    assert p.bound == "compute"
    assert (p.transfer_s, p.efficiency, p.peak_dtype, p.dtype) == (0.0, 1.0, "fp32", "fp32")
    assert p.figures is not None
    assert p.figures.sources["peak_tflops.fp32"] == "description"
    assert p.figures.sources["bandwidth_gbps"] == "description"
    assert p.figures.sources["launch_s"] == "assumed"


def test_elementwise_add_is_memory_bound(model: PerformanceModel) -> None:
    n = 10**8
    p = model.predict("add", ((n,), (n,)), "float32", "nvidia.h100-sxm")
    assert p.memory_s == pytest.approx(3 * n * 4 / H100_BW, rel=1e-12)
    assert p.compute_s == pytest.approx(n / H100_FP32, rel=1e-12)
    assert p.seconds == pytest.approx(GPU_LAUNCH + 3 * n * 4 / H100_BW, rel=1e-12)
    assert p.bound == "memory"


def test_arguments_on_the_host_cross_the_host_link(model: PerformanceModel) -> None:
    n = 10**8
    p = model.predict("add", ((n,), (n,)), "float32", "nvidia.h100-sxm", on_device=False)
    transfer = 3 * n * 4 / H100_LINK
    assert p.transfer_s == pytest.approx(transfer, rel=1e-12)
    assert p.seconds == pytest.approx(GPU_LAUNCH + 3 * n * 4 / H100_BW + transfer, rel=1e-12)
    assert p.bound == "transfer"
    assert p.figures is not None and p.figures.host_link_gbps == 64.0
    assert "half of 128 GB/s" in p.figures.notes["host_link_gbps"]


def test_a_cpu_pays_no_transfer(model: PerformanceModel) -> None:
    p = model.predict("add", ((10**6,), (10**6,)), "float64", "amd.epyc-9654", on_device=False)
    assert p.transfer_s == 0.0
    # Its own figures: 460.8 GB/s, 3.69 TFLOP/s fp64.
    assert p.seconds == pytest.approx(CPU_LAUNCH + 3 * 10**6 * 8 / 460.8e9, rel=1e-12)


def test_count_devices_split_the_work_evenly(model: PerformanceModel) -> None:
    one = model.predict("matmul", ((N, N), (N, N)), "float32", "nvidia.h100-sxm", on_device=False)
    two = model.predict(
        "matmul", ((N, N), (N, N)), "float32", "nvidia.h100-sxm", on_device=False, count=2
    )
    assert two.compute_s == pytest.approx(one.compute_s / 2)
    assert two.memory_s == pytest.approx(one.memory_s / 2)
    assert two.transfer_s == pytest.approx(one.transfer_s / 2)
    assert two.launch_s == one.launch_s
    assert two.count == 2


def test_an_accelerator_without_host_link_gets_the_assumed_one(model: PerformanceModel) -> None:
    fig = model.figures("aws.trainium")
    assert fig.host_link_gbps == model_module.ASSUMED_HOST_LINK_GBPS
    assert fig.sources["host_link_gbps"] == "assumed"
    assert fig.usd_per_hour == 1.34
    assert fig.tdp_watts is None


@pytest.mark.parametrize(
    "dtype", ["float32", "fp32", np.float32, np.dtype("float32"), prism.float32]
)
def test_dtypes_are_read_in_every_spelling(model: PerformanceModel, dtype: object) -> None:
    p = model.predict("matmul", ((64, 64), (64, 64)), dtype, "nvidia.h100-sxm")
    assert p.dtype == "fp32"


def test_complex_arithmetic_runs_at_the_component_types_peak(model: PerformanceModel) -> None:
    p = model.predict("matmul", ((N, N), (N, N)), "complex64", "nvidia.h100-sxm")
    assert p.peak_dtype == "fp32"
    assert p.compute_s == pytest.approx(4 * 2 * N**3 / H100_FP32, rel=1e-12)


def test_accepts_descriptions_and_device_instances(model: PerformanceModel) -> None:
    h100 = prism.hardware.get_device("nvidia.h100-sxm")
    a = model.predict("matmul", ((N, N), (N, N)), "float32", h100)
    b = model.predict("matmul", ((N, N), (N, N)), "float32", "nvidia.h100-sxm")
    assert a.seconds == b.seconds
    instance = prism.hardware.DeviceInstance(h100, 0, "H100", None, None, "test", simulated=True)
    assert model.predict("matmul", ((4, 4), (4, 4)), "float32", instance).device_type == (
        "nvidia.h100-sxm"
    )


def test_a_prediction_is_plain_data(model: PerformanceModel) -> None:
    p = model.predict("fft.fft", ((2**20,),), "complex128", "nvidia.h100-sxm")
    assert isinstance(p, Prediction)
    data = json.loads(json.dumps(p.as_dict()))
    assert data["op"] == "fft.fft" and data["work"]["flops"] == 5 * 2**20 * 20
    assert p.device_s == p.seconds


# -- figures a CPU description does not give -------------------------------------------------------


def test_a_cpu_peak_is_derived_from_cores_clock_and_vector_width(
    model: PerformanceModel, cpu8: prism.hardware.DeviceDescription
) -> None:
    fig = model.figures(cpu8)
    # 8 cores x 3 GHz x 16 fp64 (32 fp32) flops per cycle: AVX2 with two FMA pipes.
    assert fig.peak_tflops["fp64"] == pytest.approx(8 * 3e9 * 16 / 1e12)
    assert fig.peak_tflops["fp32"] == pytest.approx(8 * 3e9 * 32 / 1e12)
    assert fig.sources["peak_tflops.fp64"] == "derived"
    assert (
        "8 cores x 3000 MHz (clock_mhz) x 16 fp64 flops per cycle (x86-64-v3)"
        in (fig.notes["peak_tflops.fp64"])
    )
    # Memory bandwidth: assumed per core.
    assert fig.bandwidth_gbps == 8 * model_module.CPU_BANDWIDTH_GBPS_PER_CORE
    assert fig.sources["bandwidth_gbps"] == "assumed"
    assert fig.launch_s == CPU_LAUNCH
    p = model.predict("matmul", ((1024, 1024), (1024, 1024)), "float64", cpu8)
    assert p.seconds == pytest.approx(CPU_LAUNCH + 2 * 1024**3 / (8 * 3e9 * 16), rel=1e-12)


@pytest.mark.parametrize(
    ("parent", "per_cycle"),
    [("generic.x86-64-v4", 32), ("generic.x86-64-v2", 4), ("generic.x86-64", 4),
     ("generic.aarch64", 8)],
)  # fmt: skip
def test_flops_per_cycle_follow_the_isa_level(
    model: PerformanceModel, write_yaml: WriteYaml, parent: str, per_cycle: int
) -> None:
    path = write_yaml(
        "cpu.yaml",
        f"""
        device_type: test.cpu
        extends: {parent}
        compute_units: 4
        """,
    )
    fig = model.figures(prism.hardware.load_device_file(path))
    # No clock_mhz: 2.5 GHz assumed.
    assert fig.peak_tflops["fp64"] == pytest.approx(4 * 2.5e9 * per_cycle / 1e12)
    assert fig.peak_tflops["fp32"] == pytest.approx(4 * 2.5e9 * per_cycle * 2 / 1e12)
    assert "(assumed)" in fig.notes["peak_tflops.fp64"]


def test_the_host_cpu_uses_its_own_cores_and_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(model_module, "usable_cpus", lambda: 4)
    monkeypatch.setattr(model_module, "_proc_cpu_mhz", lambda: 2000.0)
    host = PerformanceModel(host_device_type="generic.x86-64-v3")
    fig = host.figures("generic.x86-64-v3")
    assert fig.peak_tflops["fp64"] == pytest.approx(4 * 2e9 * 16 / 1e12)
    assert "(/proc/cpuinfo)" in fig.notes["peak_tflops.fp64"]
    assert fig.bandwidth_gbps == 40.0
    assert fig.compute_units == 4


def test_the_host_is_detected_by_default() -> None:
    detected = PerformanceModel().host_device_type
    assert detected == prism.hardware.present_devices().devices[0].device_type


def test_a_cpu_without_cores_has_no_derived_peak(model: PerformanceModel) -> None:
    # generic.x86-64-v3 has no compute_units; it is not this model's host.
    with pytest.raises(ModelError) as info:
        model.predict("matmul", ((64, 64), (64, 64)), "float64", "generic.x86-64-v3")
    message = str(info.value)
    assert "generic.x86-64-v3 has no peak for fp64" in message
    assert "cannot be derived: the description lacks compute_units (its cores)" in message
    # An op without arithmetic needs no peak.
    zeros = model.predict("zeros", ((1000,),), "float64", "generic.x86-64-v3")
    assert zeros.seconds == pytest.approx(CPU_LAUNCH + 8000 / 20e9)


def test_a_description_attribute_sets_the_launch_latency(
    model: PerformanceModel, write_yaml: WriteYaml
) -> None:
    path = write_yaml(
        "gpu.yaml",
        """
        device_type: test.gpu
        kind: gpu
        attributes: {launch_latency_us: 12}
        peak_tflops: {fp32: 10}
        memory_hierarchy: [{level: global, bandwidth_gbps: 500}]
        """,
    )
    fig = model.figures(prism.hardware.load_device_file(path))
    assert fig.launch_s == pytest.approx(12e-6)
    assert fig.sources["launch_s"] == "description"


# -- errors --------------------------------------------------------------------------------------


def test_an_op_without_work_is_a_model_error(model: PerformanceModel) -> None:
    with pytest.raises(ModelError) as info:
        model.predict("einsum", ((3, 3), (3, 3)), "float64", "nvidia.h100-sxm")
    assert isinstance(info.value, LookupError) and isinstance(info.value, prism.PrismError)
    assert type(info.value).__module__ == "prism_core.tuning"
    assert str(info.value).startswith("'einsum' declares no work, so its time cannot be predicted")
    assert "prism_core.extending.declare_work('einsum', fn)" in str(info.value)


def test_a_missing_peak_names_device_dtype_and_the_fix(model: PerformanceModel) -> None:
    with pytest.raises(ModelError) as info:
        model.predict("matmul", ((64, 64), (64, 64)), "float64", "nvidia.l4")
    assert str(info.value) == (
        "nvidia.l4 has no peak for fp64 (peak_tflops.fp64), so matmul in fp64 cannot be "
        "predicted on it; its figures: bf16, fp16, fp32, fp8_e4m3, fp8_e5m2, int8, tf32. Add "
        "peak_tflops.fp64 to its description, or calibrate: {'nvidia.l4': {'gflops': "
        "{'fp64': ...}}}"
    )


def test_bad_arguments(model: PerformanceModel) -> None:
    with pytest.raises(ValueError, match=r"dtype: unknown data type 'float33'"):
        model.predict("add", ((3,), (3,)), "float33", "nvidia.h100-sxm")
    with pytest.raises(prism.hardware.UnknownDeviceError, match=r"nvidia\.h100-sx"):
        model.predict("add", ((3,), (3,)), "float32", "nvidia.h100-sx")
    with pytest.raises(TypeError, match=r"device must be a device type"):
        model.predict("add", ((3,), (3,)), "float32", 42)
    with pytest.raises(ValueError, match=r"predict: count must be a positive int"):
        model.predict("add", ((3,), (3,)), "float32", "nvidia.h100-sxm", count=0)
    with pytest.raises(ValueError, match=r"inner dimensions differ"):
        model.predict("matmul", ((3, 4), (3, 4)), "float32", "nvidia.h100-sxm")


# -- calibration ---------------------------------------------------------------------------------


def test_calibrated_figures_replace_the_descriptions(
    cpu8: prism.hardware.DeviceDescription,
) -> None:
    calibration = {
        "test.cpu8": {
            "gflops": {"fp64": 100.0, "float32": 200.0},
            "bandwidth_gbs": 15.0,
            "launch_us": 2.0,
            "efficiency": {"matmul": 0.5},
            "overhead_us": {"matmul": 10.0},
        }
    }
    model = PerformanceModel(calibration, host_device_type=None)
    fig = model.figures(cpu8)
    assert fig.peak_tflops == {"fp64": 0.1, "fp32": 0.2}
    assert fig.bandwidth_gbps == 15.0
    assert fig.launch_s == pytest.approx(2e-6)
    assert fig.sources["peak_tflops.fp32"] == "calibrated"
    assert fig.sources["efficiency.matmul"] == "calibrated"
    assert "peak_tflops.fp64" not in fig.notes
    p = model.predict("matmul", ((512, 512), (512, 512)), "float64", cpu8)
    roof = 2 * 512**3 / 100e9
    assert p.seconds == pytest.approx(2e-6 + 10e-6 + roof / 0.5, rel=1e-12)
    # Other ops keep efficiency 1.
    add = model.predict("add", ((10**6,), (10**6,)), "float64", cpu8)
    assert add.seconds == pytest.approx(2e-6 + 3 * 8e6 / 15e9, rel=1e-12)
    # The calibration is plain data and round-trips.
    again = PerformanceModel(json.loads(json.dumps(model.calibration)), host_device_type=None)
    assert again.predict("matmul", ((512, 512), (512, 512)), "float64", cpu8) == p


def test_a_malformed_calibration_names_the_key() -> None:
    with pytest.raises(ValueError, match=r"\['x'\]\['bandwith_gbs'\]: unknown key \(did you mean"):
        PerformanceModel({"x": {"bandwith_gbs": 3}})
    with pytest.raises(ValueError, match=r"calibration\['x'\]\['efficiency'\]\['matmul'\] must be"):
        PerformanceModel({"x": {"efficiency": {"matmul": 0}}})
    with pytest.raises(TypeError, match=r"calibration\['x'\]\['launch_us'\] must be a number"):
        PerformanceModel({"x": {"launch_us": "fast"}})
    with pytest.raises(ValueError, match=r"unknown data type 'fp33'"):
        PerformanceModel({"x": {"gflops": {"fp33": 1.0}}})
    with pytest.raises(TypeError, match=r"calibration must be a mapping"):
        PerformanceModel([("x", {})])  # type: ignore[arg-type]


def _truth(
    model: PerformanceModel,
    device: prism.hardware.DeviceDescription,
    efficiency: float,
    overhead: float,
) -> list[tuple[str, tuple[tuple[int, ...], ...], str, prism.hardware.DeviceDescription, float]]:
    """Measurements made by a machine that reaches ``efficiency`` of the roofline after a fixed
    ``overhead`` per call."""
    out = []
    for n in (64, 128, 256, 512, 1024):
        p = model.predict("matmul", ((n, n), (n, n)), "float64", device)
        roof = max(p.compute_s, p.memory_s)
        out.append(
            ("matmul", ((n, n), (n, n)), "float64", device,
             p.launch_s + overhead + roof / efficiency)
        )  # fmt: skip
    return out


def test_calibrate_fits_efficiency_and_overhead(
    model: PerformanceModel, cpu8: prism.hardware.DeviceDescription
) -> None:
    measured = _truth(model, cpu8, efficiency=0.25, overhead=20e-6)
    fitted = model.calibrate(measured)
    entry = fitted.calibration["test.cpu8"]
    assert entry["efficiency"]["matmul"] == pytest.approx(0.25, rel=1e-9)
    assert entry["overhead_us"]["matmul"] == pytest.approx(20.0, rel=1e-6)
    for _, shapes, dtype, device, seconds in measured:
        assert fitted.predict("matmul", shapes, dtype, device).seconds == pytest.approx(seconds)
    # The original model is unchanged.
    assert model.calibration == {}
    json.dumps(fitted.calibration)


def test_calibrate_per_dtype(
    model: PerformanceModel, cpu8: prism.hardware.DeviceDescription
) -> None:
    measured = []
    for dtype, efficiency in (("float32", 0.2), ("float64", 0.6)):
        for n in (64, 256, 1024):
            p = model.predict("matmul", ((n, n), (n, n)), dtype, cpu8)
            seconds = p.launch_s + 5e-6 + max(p.compute_s, p.memory_s) / efficiency
            measured.append(("matmul", ((n, n), (n, n)), dtype, cpu8, seconds))
    fitted = model.calibrate(measured, per_dtype=True)
    efficiency = fitted.calibration["test.cpu8"]["efficiency"]
    assert efficiency == {
        "matmul:fp32": pytest.approx(0.2, rel=1e-9),
        "matmul:fp64": pytest.approx(0.6, rel=1e-9),
    }
    for _, shapes, dtype, device, seconds in measured:
        assert fitted.predict("matmul", shapes, dtype, device).seconds == pytest.approx(seconds)
    # A figure for the op in a dtype wins over the op's own; other dtypes fall back to it.
    mixed = PerformanceModel(
        {"test.cpu8": {"efficiency": {"matmul": 0.5, "matmul:fp32": 0.25}}},
        host_device_type=None,
    )
    assert mixed.predict("matmul", ((8, 8), (8, 8)), "float32", cpu8).efficiency == 0.25
    assert mixed.predict("matmul", ((8, 8), (8, 8)), "float64", cpu8).efficiency == 0.5
    with pytest.raises(TypeError, match=r"per_dtype must be True or False"):
        model.calibrate(measured, per_dtype="yes")  # type: ignore[arg-type]


def test_calibrate_by_the_median_ratio(
    model: PerformanceModel, cpu8: prism.hardware.DeviceDescription
) -> None:
    measured = _truth(model, cpu8, efficiency=0.5, overhead=0.0)
    # One outlier does not move a median.
    op, shapes, dtype, device, seconds = measured[0]
    measured[0] = (op, shapes, dtype, device, seconds * 100)
    fitted = model.calibrate(measured, overhead=False)
    entry = fitted.calibration["test.cpu8"]
    assert entry["efficiency"]["matmul"] == pytest.approx(0.5, rel=1e-9)
    assert "overhead_us" not in entry


def test_calibrate_accepts_mappings_and_keeps_patterns(
    model: PerformanceModel, cpu8: prism.hardware.DeviceDescription
) -> None:
    model.register_pattern("stencil", compute_intensity=0.5)
    p = model.predict("add", ((10**6,), (10**6,)), "float64", cpu8)
    fitted = model.calibrate(
        [
            {
                "op": "add",
                "shapes": ((10**6,), (10**6,)),
                "dtype": "float64",
                "device": cpu8,
                "seconds": 2 * p.seconds,
            }
        ]
    )
    assert fitted.calibration["test.cpu8"]["efficiency"]["add"] == pytest.approx(
        p.memory_s / (2 * p.seconds - p.launch_s)
    )
    assert "stencil" in fitted.patterns


def test_calibrate_rejects_malformed_measurements(model: PerformanceModel) -> None:
    with pytest.raises(ValueError, match=r"measurements\[0\] must be \(op, shapes, dtype"):
        model.calibrate([("matmul", ((2, 2), (2, 2)))])
    with pytest.raises(ValueError, match=r"measurements\[0\]: seconds must be a positive number"):
        model.calibrate([("add", ((2,), (2,)), "float64", "nvidia.h100-sxm", 0)])
    with pytest.raises(ValueError, match=r"measurements\[0\] lacks 'seconds'"):
        model.calibrate([{"op": "add", "shapes": (), "dtype": "f", "device": "x"}])
    with pytest.raises(ModelError, match=r"calibrate\(\): 'einsum' declares no work"):
        model.calibrate([("einsum", ((2, 2),), "float64", "nvidia.h100-sxm", 1.0)])


# -- workload patterns (the seed's section 5.2) ----------------------------------------------------


def test_the_seed_example(model: PerformanceModel) -> None:
    model.register_pattern(
        name="smith-waterman",
        compute_intensity=4.5,  # FLOPS per byte
        parallelism_degree="high",
        memory_access_pattern="structured",
        branch_divergence="low",
    )
    table = model.predict_performance(
        workload="smith-waterman",
        data_size=1e9,
        available_hardware=[("aws.graviton3", 1), ("aws.trainium", 2), ("nvidia.a100-sxm-80gb", 1)],
    )
    assert isinstance(table, PerformanceTable)
    assert [r.label for r in table] == [
        "aws.graviton3 x1",
        "aws.trainium x2",
        "nvidia.a100-sxm-80gb x1",
    ]
    graviton, trainium, a100 = table
    # Graviton 3, a CPU: no transfer; 307.2 GB/s beats 4.5e9 flops at 5.325 TFLOP/s fp32.
    assert graviton.seconds == pytest.approx(CPU_LAUNCH + 1e9 / 307.2e9, rel=1e-12)
    assert graviton.bound == "memory"
    assert graviton.throughput == pytest.approx(1e9 / (1e9 / 307.2e9))
    assert graviton.cost_per_run is None and graviton.energy_j is None
    # Two Trainium chips: half the data each over the assumed 32 GB/s host link.
    t_memory = 1e9 / (820e9 * 2)
    t_transfer = 1e9 / (32e9 * 2)
    assert trainium.seconds == pytest.approx(GPU_LAUNCH + t_memory + t_transfer, rel=1e-12)
    assert trainium.bound == "transfer"
    assert trainium.cost_per_hour == pytest.approx(2 * 1.34)
    assert trainium.cost_per_run == pytest.approx(2 * 1.34 * trainium.seconds / 3600)
    # Pipelined runs overlap the transfer with compute: the transfer sets the pace.
    assert trainium.throughput == pytest.approx(1e9 / t_transfer)
    # A100: 400 W.
    assert a100.energy_j == pytest.approx(400 * a100.seconds)
    text = str(table)
    assert text.splitlines()[0].startswith("smith-waterman: 1 GB of data, fp32; throughput in GB/s")
    assert "aws.trainium" in text and "$" in text
    data = json.loads(json.dumps(table.as_dict()))
    assert data["rows"][0]["device_type"] == "aws.graviton3"
    assert table.fastest is graviton


def test_pattern_characteristics_scale_peak_and_bandwidth(model: PerformanceModel) -> None:
    model.register_pattern("serial", compute_intensity=100.0, parallelism_degree="low")
    model.register_pattern(
        "branchy", compute_intensity=100.0, branch_divergence="high", memory_access_pattern="random"
    )
    h100 = "nvidia.h100-sxm"
    (serial,) = model.predict_performance("serial", 1e6, [h100], on_device=True)
    assert serial.prediction is not None
    # Low parallelism: one of the 132 SMs.
    assert serial.prediction.compute_s == pytest.approx(100e6 / (H100_FP32 / 132))
    (branchy,) = model.predict_performance("branchy", 1e6, [h100], on_device=True)
    assert branchy.prediction is not None
    assert branchy.prediction.compute_s == pytest.approx(100e6 / (H100_FP32 * 0.25))
    assert branchy.prediction.memory_s == pytest.approx(1e6 / (H100_BW * 0.125))
    # CPUs are not slowed by divergence.
    (cpu,) = model.predict_performance("branchy", 1e6, ["amd.epyc-9654"])
    assert cpu.prediction is not None
    assert cpu.prediction.compute_s == pytest.approx(100e6 / 7.37e12)


def test_register_pattern_validates(model: PerformanceModel) -> None:
    with pytest.raises(ValueError, match=r"parallelism_degree must be one of 'high', 'medium', "
                       r"'low'; got 'hihg' \(did you mean 'high'\?\)"):  # fmt: skip
        model.register_pattern("x", 1.0, parallelism_degree="hihg")
    with pytest.raises(ValueError, match=r"memory_access_pattern must be one of"):
        model.register_pattern("x", 1.0, memory_access_pattern="chaotic")
    with pytest.raises(ValueError, match=r"branch_divergence must be one of"):
        model.register_pattern("x", 1.0, branch_divergence=3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"compute_intensity must be a positive number"):
        model.register_pattern("x", 0)
    with pytest.raises(TypeError, match=r"name must be a non-empty string"):
        model.register_pattern("", 1.0)
    assert model.register_pattern("x", 2, dtype="float64").dtype == "fp64"


def test_predict_performance_arguments(model: PerformanceModel) -> None:
    model.register_pattern("p", 1.0)
    with pytest.raises(ValueError, match=r"data_size must be a positive number of bytes"):
        model.predict_performance("p", -1, ["nvidia.h100-sxm"])
    with pytest.raises(ModelError, match=r"'q' is not a registered pattern.*\(patterns: p\)"):
        model.predict_performance("q", 1e6, ["nvidia.h100-sxm"])
    with pytest.raises(ValueError, match=r"available_hardware is empty"):
        model.predict_performance("p", 1e6, [])
    with pytest.raises(ValueError, match=r"available_hardware\[0\]: count must be a positive"):
        model.predict_performance("p", 1e6, [("nvidia.h100-sxm", 0)])
    with pytest.raises(TypeError, match=r"available_hardware must be a list of devices"):
        model.predict_performance("p", 1e6, "nvidia.h100-sxm")


def test_predict_performance_of_an_op(model: PerformanceModel) -> None:
    table = model.predict_performance(
        "matmul",
        shapes=((N, N), (N, N)),
        dtype="float32",
        available_hardware=["nvidia.h100-sxm", "nvidia.l4"],
        on_device=True,
    )
    assert table[0].device_type == "nvidia.h100-sxm"
    assert table[0].seconds == pytest.approx(2 * N**3 / H100_FP32 + GPU_LAUNCH, rel=1e-12)
    assert table.data_bytes == 3 * N * N * 4
    # In fp64 the L4 has no figure: it is listed, not predicted.
    table = model.predict_performance(
        "matmul", shapes=((64, 64), (64, 64)), available_hardware=["nvidia.h100-sxm", "nvidia.l4"]
    )
    assert [r.device_type for r in table] == ["nvidia.h100-sxm"]
    assert table.excluded[0][0] == "nvidia.l4 x1"
    assert "not predicted: nvidia.l4 x1: nvidia.l4 has no peak for fp64" in str(table)


def test_public_classes_show_the_public_module() -> None:
    for cls in (PerformanceModel, Figures, Prediction, PerformanceTable, ModelError):
        assert cls.__module__ == "prism_core.tuning"
    assert Work.__module__ == "prism_core.extending"


def test_work_can_be_predicted_directly(model: PerformanceModel) -> None:
    p = model.predict_work(Work(67e12, 0), "fp32", "nvidia.h100-sxm", name="mine")
    assert p.seconds == pytest.approx(1.0 + GPU_LAUNCH)
    assert p.op == "mine"
