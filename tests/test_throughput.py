"""Throughput per execution unit (format 2): the schema's ``throughput``, ``peak_for`` and the
performance model's choice of the matrix or the vector rate, on the shipped descriptions.

No GPU is needed: the model predicts from the descriptions, and the one dispatch test uses the
``simgpu`` test plugin (tests/simulated_gpu_plugin.py), which reports a simulated
``nvidia.h100-pcie``, found through a real entry point, as tests/test_dispatch_measured.py does.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path

import pytest

import prism_core as prism
from prism_core import ArraySpec
from prism_core._tuning.op_work import Work
from prism_core._tuning.work import work_of
from prism_core.hardware import Throughput
from prism_core.kernel.description.library import DeviceLibrary, SearchEntry
from prism_core.tuning import PerformanceModel

from .conftest import HARDWARE, problems_of, run_prism, shipped_library

LIB = shipped_library()


def model() -> PerformanceModel:
    return PerformanceModel(library=LIB, host_device_type=None)


# -- the schema -------------------------------------------------------------------------------

GOOD = """\
format_version: 2
device_type: acme.x1
peak_tflops: {fp64: 60}
throughput:
  - {unit: vector, data_type: fp64, tflops: 30}
  - {unit: matrix, data_type: fp64, tflops: 60, accumulate: fp64, clock_mhz: 1500}
"""


def test_a_format_2_file_with_throughput_is_valid() -> None:
    assert problems_of(GOOD) == []


def test_a_repeated_unit_and_data_type_is_a_problem_at_the_second_entry() -> None:
    text = GOOD + "  - {unit: vector, data_type: fp64, tflops: 31}\n"
    assert problems_of(text) == [
        "d.yaml:7:5: $.throughput[2]: throughput has two entries for unit 'vector' and "
        "data_type 'fp64' (the first at line 5); give each pair one entry"
    ]


def test_the_same_data_type_on_two_units_is_not_a_repeat() -> None:
    text = GOOD + "  - {unit: vector, data_type: fp32, tflops: 60}\n"
    assert problems_of(text) == []


def test_an_unknown_unit_is_rejected_with_the_accepted_ones() -> None:
    text = GOOD.replace("unit: matrix", "unit: tensor")
    [problem] = problems_of(text)
    assert problem.startswith("d.yaml:6:")
    assert "$.throughput[1].unit" in problem
    assert "'tensor'" in problem and "matrix, vector" in problem


@pytest.mark.parametrize(
    ("old", "new", "where"),
    [
        ("tflops: 30}", "tflops: 0}", "$.throughput[0].tflops"),  # 0 is not a rate
        ("data_type: fp64, tflops: 30", "data_type: float64, tflops: 30", "$.throughput[0]"),
        ("accumulate: fp64", "accumulate: fp65", "$.throughput[1].accumulate"),
        ("clock_mhz: 1500", "clock_mhz: -1", "$.throughput[1].clock_mhz"),
    ],
)
def test_bad_fields_are_located(old: str, new: str, where: str) -> None:
    found = problems_of(GOOD.replace(old, new))
    assert len(found) == 1 and f" {where}" in found[0], found


def test_entries_need_unit_data_type_and_tflops() -> None:
    text = GOOD.replace("  - {unit: vector, data_type: fp64, tflops: 30}", "  - {unit: vector}")
    found = problems_of(text)
    assert "missing required key 'data_type'" in " ".join(found)
    assert "missing required key 'tflops'" in " ".join(found)


def test_a_format_1_file_using_throughput_gets_the_format_version_problem_at_its_line() -> None:
    text = GOOD.replace("format_version: 2", "format_version: 1")
    assert problems_of(text) == [
        "d.yaml:4:1: $.throughput: throughput is a key of format 2 of the device-file format, "
        "and this file says format_version: 1: add `format_version: 2` at its top "
        '(docs/device-files.md, "Format versions")'
    ]


def test_prism_validate_reports_a_repeat_at_its_line(tmp_path: Path) -> None:
    path = tmp_path / "x1.yaml"
    path.write_text(GOOD + "  - {unit: matrix, data_type: fp64, tflops: 61}\n", encoding="utf-8")
    proc = run_prism(tmp_path, "validate", str(path))
    assert proc.returncode == 1
    assert (
        "  x1.yaml:7:5: $.throughput[2]: throughput has two entries for unit 'matrix' and "
        "data_type 'fp64' (the first at line 6); give each pair one entry\n"
    ) in proc.stdout


def test_prism_schema_shows_throughput(tmp_path: Path) -> None:
    proc = run_prism(tmp_path, "schema")
    assert proc.returncode == 0, proc.stderr
    schema = json.loads(proc.stdout)
    prop = schema["properties"]["throughput"]
    assert prop["description"].startswith("Format 2.")
    entry = schema["definitions"]["throughput_entry"]
    assert entry["properties"]["unit"]["enum"] == ["matrix", "vector"]
    assert set(entry["required"]) == {"unit", "data_type", "tflops"}
    assert "boost clock" in entry["properties"]["tflops"]["description"]


# -- the descriptions -------------------------------------------------------------------------


def test_peak_for_on_the_h100() -> None:
    h100 = LIB.get("nvidia.h100-sxm")
    assert h100.peak_for("fp64", "matrix") == 67.0
    assert h100.peak_for("fp64", "vector") == 34.0
    assert h100.peak("fp64") == 67.0  # the headline figure stays the fastest unit's
    assert h100.peak_for("fp32", "vector") == 67.0
    # No fp32 matrix entry (FP32 matmuls run on the CUDA cores): the headline figure.
    assert h100.peak_for("fp32", "matrix") == 67.0
    # No fp16 vector entry: the headline figure, as a format-1 description says.
    assert h100.peak_for("fp16", "vector") == pytest.approx(989.4)
    assert h100.peak_for("fp4", "matrix") is None
    bf16 = next(t for t in h100.throughput if t.data_type == "bf16")
    assert bf16 == Throughput("matrix", "bf16", 989.4, accumulate="fp32", clock_mhz=1830.0)
    with pytest.raises(ValueError, match="'matrix', 'vector'"):
        h100.peak_for("fp64", "tensor")


@pytest.mark.parametrize(
    ("device_type", "dtype", "matrix", "vector"),
    [
        ("nvidia.h100-sxm", "fp64", 67, 34),
        ("nvidia.h200", "fp64", 67, 34),
        ("nvidia.h100-pcie", "fp64", 51, 26),
        ("nvidia.a100-sxm-80gb", "fp64", 19.5, 9.7),
        ("nvidia.a100-sxm-80gb", "fp16", 312, 78),
        ("nvidia.b200", "fp64", 37, 37),
        ("amd.mi300x", "fp64", 163.4, 81.7),
        ("amd.mi300x", "fp32", 163.4, 163.4),
        ("amd.mi250x", "fp64", 95.7, 47.9),
        ("amd.mi250x-gcd", "fp64", 47.85, 23.95),
        ("intel.max-1550", "fp64", 52.4, 52.4),  # no FP64 matrix path: the headline figure
    ],
)
def test_matrix_and_vector_rates_of_the_shipped_gpus(
    device_type: str, dtype: str, matrix: float, vector: float
) -> None:
    desc = LIB.get(device_type)
    assert desc.data["format_version"] == 2
    assert desc.peak_for(dtype, "matrix") == pytest.approx(matrix)
    assert desc.peak_for(dtype, "vector") == pytest.approx(vector)


def test_every_headline_figure_is_the_fastest_unit_s() -> None:
    """Where a shipped file gives rates per unit, ``peak_tflops`` of each of their data types is
    the fastest of them, and each pair is given once."""
    checked = 0
    for desc in LIB.list():
        if not desc.throughput:
            continue
        pairs = [(t.unit, t.data_type) for t in desc.throughput]
        assert len(pairs) == len(set(pairs)), desc.device_type
        for dtype in {t.data_type for t in desc.throughput}:
            fastest = max(t.tflops for t in desc.throughput if t.data_type == dtype)
            assert desc.peak(dtype) == pytest.approx(fastest), (desc.device_type, dtype)
            checked += 1
    assert checked >= 40


def test_a_child_s_throughput_replaces_its_parent_s_whole(
    tmp_path: Path, write_yaml: Callable[[str, str], Path]
) -> None:
    write_yaml(
        "lib/slow.yaml",
        """
        format_version: 2
        device_type: acme.slow-h100
        extends: nvidia.h100-sxm
        throughput:
          - {unit: vector, data_type: fp64, tflops: 20}
        """,
    )
    write_yaml(
        "lib/same.yaml",
        """
        device_type: acme.same-h100
        extends: nvidia.h100-sxm
        """,
    )
    lib = DeviceLibrary(
        [SearchEntry(HARDWARE, "builtin"), SearchEntry(tmp_path / "lib", "user")], use_cache=False
    )
    slow = lib.get("acme.slow-h100")
    assert slow.throughput == (Throughput("vector", "fp64", 20.0),)
    assert slow.peak_for("fp64", "vector") == 20.0
    assert slow.peak_for("fp64", "matrix") == 67.0  # the inherited headline figure
    assert slow.provenance["throughput"] == "acme.slow-h100"
    same = lib.get("acme.same-h100")
    assert same.throughput == lib.get("nvidia.h100-sxm").throughput
    assert same.provenance["throughput"] == "nvidia.h100-sxm"


FORMAT_1 = """\
format_version: 1
device_type: acme.old
kind: gpu
peak_tflops: {fp64: 67}
memory_hierarchy:
  - {level: global, bandwidth_gbps: 3350}
"""


def _library_with(tmp_path: Path, name: str, text: str) -> DeviceLibrary:
    (tmp_path / "lib").mkdir(exist_ok=True)
    (tmp_path / "lib" / name).write_text(text, encoding="utf-8")
    lib = DeviceLibrary([SearchEntry(tmp_path / "lib", "user")], use_cache=False)
    assert lib.problems == []
    return lib


def test_a_format_1_file_behaves_as_before(tmp_path: Path) -> None:
    """Without ``throughput`` every unit's rate is the headline figure: each op's compute time
    is its flops over ``peak_tflops``, as the model said before format 2."""
    lib = _library_with(tmp_path, "old.yaml", FORMAT_1)
    old = lib.get("acme.old")
    assert old.throughput == ()
    assert old.peak_for("fp64", "matrix") == old.peak_for("fp64", "vector") == 67.0
    m = PerformanceModel(library=lib, host_device_type=None)
    assert m.figures("acme.old").throughput == {}
    for op, shapes in (("matmul", ((512, 512), (512, 512))), ("exp", ((10**6,),))):
        p = m.predict(op, shapes, "float64", "acme.old")
        assert p.compute_s == pytest.approx(p.work.flops / 67e12)
        assert p.peak_unit is None and p.peak_tflops == 67.0
        assert p.rate_text == (f"peak 67 TFLOP/s (fp64, peak_tflops; no {p.work.unit} rate given)")


def test_matrix_work_falls_back_to_the_vector_rate_without_a_headline(tmp_path: Path) -> None:
    lib = _library_with(
        tmp_path,
        "v.yaml",
        """\
format_version: 2
device_type: acme.vector-only
kind: gpu
memory_hierarchy:
  - {level: global, bandwidth_gbps: 1000}
throughput:
  - {unit: vector, data_type: fp16, tflops: 50}
""",
    )
    desc = lib.get("acme.vector-only")
    assert desc.peak_for("fp16", "matrix") == 50.0  # a matrix product runs on the vector units
    assert desc.peak_for("fp16", "vector") == 50.0
    assert desc.peak_for("fp32", "vector") is None
    p = PerformanceModel(library=lib, host_device_type=None).predict(
        "matmul", ((256, 256), (256, 256)), "float16", "acme.vector-only"
    )
    assert (p.peak_unit, p.peak_tflops) == ("vector", 50.0)


# -- which unit the work declares -------------------------------------------------------------


@pytest.mark.parametrize(
    ("op", "shapes", "unit"),
    [
        ("matmul", ((64, 32), (32, 16)), "matrix"),
        ("matmul", ((8, 64, 32), (32, 16)), "matrix"),
        ("matmul", ((64, 32), (32,)), "vector"),  # matrix-vector: Level-2 BLAS
        ("matmul", ((32,), (32, 16)), "vector"),
        ("dot", ((4, 10), (10, 3)), "matrix"),
        ("dot", ((10,), (10,)), "vector"),
        ("dot", ((), (5,)), "vector"),
        ("tensordot", ((4, 5, 6), (5, 6, 7)), "matrix"),
        ("tensordot", ((4,), (7,)), "vector"),  # no contracted axis: an outer product
        ("vecdot", ((100, 3), (100, 3)), "vector"),
        ("linalg.solve", ((64, 64), (64,)), "matrix"),
        ("linalg.inv", ((64, 64),), "matrix"),
        ("linalg.cholesky", ((64, 64),), "matrix"),
        ("linalg.qr", ((64, 32),), "matrix"),
        ("linalg.det", ((64, 64),), "matrix"),
        ("linalg.matrix_power", ((64, 64),), "matrix"),
        ("linalg.svd", ((64, 64),), "vector"),
        ("linalg.eigh", ((64, 64),), "vector"),
        ("add", ((100,), (100,)), "vector"),
        ("exp", ((100,),), "vector"),
        ("sum", ((100,),), "vector"),
        ("sort", ((100,),), "vector"),
        ("fft.fft", ((1024,),), "vector"),
    ],
)
def test_the_unit_each_op_declares(op: str, shapes: tuple[tuple[int, ...], ...], unit: str) -> None:
    work = work_of(op, shapes, 8)
    assert work is not None and work.unit == unit


def test_a_declared_work_is_vector_unless_it_says_matrix() -> None:
    assert Work(1, 1).unit == "vector"
    assert Work(1, 1, unit="matrix").as_dict() == {"flops": 1.0, "bytes": 1.0, "unit": "matrix"}
    # The amount of work is the same whichever unit does it.
    assert Work(1, 1, unit="matrix") == Work(1, 1)
    with pytest.raises(ValueError, match=r"unit must be one of 'matrix', 'vector'.*'tensor'"):
        Work(1, 1, unit="tensor")


# -- the performance model --------------------------------------------------------------------


def test_elementwise_fp64_gets_the_vector_rate_and_matmul_the_matrix_rate() -> None:
    m = model()
    gemm = m.predict("matmul", ((8192, 8192), (8192, 8192)), "float64", "nvidia.h100-sxm")
    exp = m.predict("exp", ((8192, 8192),), "float64", "nvidia.h100-sxm")
    assert (gemm.peak_unit, gemm.peak_tflops) == ("matrix", 67.0)
    assert (exp.peak_unit, exp.peak_tflops) == ("vector", 34.0)
    assert gemm.compute_s == pytest.approx(2 * 8192**3 / 67e12)
    assert exp.compute_s == pytest.approx(exp.work.flops / 34e12)
    # Time per flop: the elementwise op's is the matrix product's times 67 / 34.
    per_flop = (exp.compute_s / exp.work.flops) / (gemm.compute_s / gemm.work.flops)
    assert per_flop == pytest.approx(67 / 34)
    assert gemm.rate_text == "matrix rate 67 TFLOP/s (fp64)"
    assert exp.rate_text == "vector rate 34 TFLOP/s (fp64)"
    assert gemm.as_dict()["peak_unit"] == "matrix" and exp.as_dict()["peak_tflops"] == 34.0


@pytest.mark.parametrize(
    ("op", "shapes"),
    [
        ("add", ((10**6,), (10**6,))),
        ("sum", ((10**6,),)),
        ("fft.fft", ((2**20,),)),
        ("sort", ((10**6,),)),
        ("linalg.svd", ((1024, 1024),)),
        ("vecdot", ((1000, 64), (1000, 64))),
        ("matmul", ((4096, 4096), (4096,))),
    ],
)
def test_no_other_work_gets_the_matrix_rate(op: str, shapes: tuple[tuple[int, ...], ...]) -> None:
    for device_type in ("nvidia.h100-sxm", "amd.mi300x", "nvidia.a100-sxm-80gb"):
        p = model().predict(op, shapes, "float64", device_type)
        vector = LIB.get(device_type).peak_for("fp64", "vector")
        assert p.peak_unit == "vector" and p.peak_tflops == vector, (op, device_type)
        assert p.peak_tflops < LIB.get(device_type).peak_for("fp64", "matrix")  # type: ignore[operator]


def test_complex_work_uses_the_unit_rate_of_its_component_type() -> None:
    m = model()
    exp = m.predict("exp", ((1000,),), "complex128", "nvidia.h100-sxm")
    gemm = m.predict("matmul", ((512, 512), (512, 512)), "complex128", "nvidia.h100-sxm")
    assert (exp.peak_dtype, exp.peak_unit, exp.peak_tflops) == ("fp64", "vector", 34.0)
    assert (gemm.peak_dtype, gemm.peak_unit, gemm.peak_tflops) == ("fp64", "matrix", 67.0)


def test_the_headline_is_used_where_a_unit_has_no_rate() -> None:
    # Intel's Max 1550 has no FP64 matrix path; its file gives the vector rate alone.
    p = model().predict("matmul", ((4096, 4096), (4096, 4096)), "float64", "intel.max-1550")
    assert (p.peak_unit, p.peak_tflops) == (None, 52.4)
    assert p.rate_text == "peak 52.4 TFLOP/s (fp64, peak_tflops; no matrix rate given)"


def test_a_calibrated_rate_replaces_both_units() -> None:
    m = PerformanceModel(
        {"nvidia.h100-sxm": {"gflops": {"fp64": 50000.0}}}, library=LIB, host_device_type=None
    )
    fig = m.figures("nvidia.h100-sxm")
    assert "fp64" not in fig.throughput["matrix"] and "fp64" not in fig.throughput["vector"]
    assert "throughput.vector.fp64" not in fig.sources
    assert fig.sources["throughput.vector.fp32"] == "description"
    for op, shapes in (("matmul", ((1024, 1024), (1024, 1024))), ("exp", ((10**6,),))):
        p = m.predict(op, shapes, "float64", "nvidia.h100-sxm")
        assert (p.peak_unit, p.peak_tflops) == (None, 50.0)
        assert p.rate_text == "peak 50 TFLOP/s (fp64, calibrated)"


def test_figures_carry_the_rates_and_their_source() -> None:
    fig = model().figures("nvidia.h100-sxm")
    assert fig.throughput["vector"]["fp64"] == 34.0 and fig.throughput["matrix"]["fp64"] == 67.0
    assert fig.sources["throughput.matrix.int8"] == "description"
    assert fig.peak("fp64") == (67.0, "fp64")
    assert fig.peak("fp64", "vector") == (34.0, "fp64")
    assert fig.rate("complex128", "matrix") == (67.0, "fp64", "matrix")
    assert json.loads(json.dumps(fig.as_dict()))["throughput"]["vector"]["fp64"] == 34.0


def test_integer_rates_are_tops() -> None:
    p = model().predict("matmul", ((4096, 4096), (4096, 4096)), "int8", "nvidia.h100-sxm")
    assert p.rate_text == "matrix rate 1979 TOPS (int8)"
    assert math.isclose(p.peak_tflops or 0, 1978.9)


# -- explain ----------------------------------------------------------------------------------


def test_explain_shows_the_rate_a_modelled_choice_used(simgpu: None) -> None:
    spec = ArraySpec((4096, 4096), "float64")
    decision = prism.explain("matmul", spec, spec)
    assert decision.decided_by == "modelled"
    text = str(decision)
    # The simulated H100 PCIe: its Tensor Cores' fp64 rate, not the CUDA cores' 26.
    assert "simgpu.matmul" in text and "matrix rate 51 TFLOP/s (fp64)" in text
    assert "vector rate 26" not in text
    assert "matrix rate 51 TFLOP/s (fp64)" in decision.basis.note


# -- a rate above the peak ----------------------------------------------------------------------


def test_a_rate_above_the_peak_is_refused_at_its_line() -> None:
    """peak_tflops is the fastest unit's rate: no unit's dense rate is above it, whatever it
    accumulates in (rounding of 0.5 % aside)."""
    text = GOOD + "  - {unit: matrix, data_type: fp32, tflops: 3000, accumulate: fp32}\n"
    text = text.replace("peak_tflops: {fp64: 60}", "peak_tflops: {fp64: 60, fp32: 60}")
    text = text.replace("tflops: 30}", "tflops: 60.2}")  # 0.3 % over: a datasheet's rounding
    assert problems_of(text) == [
        "d.yaml:7:45: $.throughput[2].tflops: the matrix rate of fp32, 3000 TFLOP/s, is above "
        "peak_tflops.fp32, 60: peak_tflops is the fastest unit's dense rate, so no unit's is "
        "higher; give at most 60 (a dense figure, without structured sparsity), or raise "
        "peak_tflops.fp32"
    ]


def test_a_rate_above_an_inherited_peak_is_refused(tmp_path: Path) -> None:
    """Checked on the resolved description too: a child that lowers the peak below the rates
    it inherits, or gives rates above the peak it inherits, is refused at its own key."""
    (tmp_path / "fam.yaml").write_text(
        "device_type: acme.fam\nabstract: true\npeak_tflops: {fp64: 60}\n", encoding="utf-8"
    )
    (tmp_path / "fast.yaml").write_text(
        "format_version: 2\ndevice_type: acme.fast\nextends: acme.fam\nthroughput:\n"
        "  - {unit: vector, data_type: fp64, tflops: 3000}\n",
        encoding="utf-8",
    )
    (tmp_path / "ok.yaml").write_text(
        "format_version: 2\ndevice_type: acme.ok\nextends: acme.fam\nthroughput:\n"
        "  - {unit: vector, data_type: fp64, tflops: 30}\n",
        encoding="utf-8",
    )
    (tmp_path / "slow.yaml").write_text(
        "device_type: acme.slow\nextends: acme.ok\npeak_tflops: {fp64: 6}\n", encoding="utf-8"
    )
    proc = run_prism(tmp_path, "validate", "fam.yaml", "fast.yaml", "ok.yaml", "slow.yaml")
    assert proc.returncode == 1
    problems = [line.strip() for line in proc.stdout.splitlines() if line.startswith("  ")]
    assert problems == [
        "fast.yaml:5:45: $.throughput[0].tflops: the vector rate of fp64, 3000 TFLOP/s, is "
        "above peak_tflops.fp64, 60: peak_tflops is the fastest unit's dense rate, so no "
        "unit's is higher; give at most 60 (a dense figure, without structured sparsity), or "
        "raise peak_tflops.fp64",
        "slow.yaml:3:21: $.peak_tflops.fp64: the vector rate of fp64, 30 TFLOP/s, is above "
        "peak_tflops.fp64, 6: peak_tflops is the fastest unit's dense rate, so no unit's is "
        "higher; give at most 6 (a dense figure, without structured sparsity), or raise "
        "peak_tflops.fp64",
    ]


def test_no_shipped_rate_is_above_its_peak() -> None:
    for desc in LIB:
        peaks = desc.peak_tflops
        for entry in desc.throughput:
            assert entry.tflops <= peaks.get(entry.data_type, math.inf) * 1.005, (desc, entry)
