"""The example plugin of docs/writing-a-plugin.md, taken from the page and installed for real.

The page marks each file of the example with ``<!-- example: PATH -->`` before its code block;
the tests write exactly those files, make the distribution's ``prism.plugins`` entry point
visible (a ``.dist-info`` on ``sys.path``, or ``PYTHONPATH`` for the command line), and check that
dispatch picks the example's variants where the page says it does.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import prism_core as prism
from prism_core import ArraySpec
from prism_core.testing import check_backend

from .conftest import REPO

GUIDE = REPO / "docs" / "writing-a-plugin.md"
EXAMPLE = re.compile(r"<!-- example: (\S+) -->\n```\w*\n(.*?)\n```", re.DOTALL)
PACKAGE = "src/prism_plugin_acme"


def example_files() -> dict[str, str]:
    return {path: body + "\n" for path, body in EXAMPLE.findall(GUIDE.read_text("utf-8"))}


def _entry_points(pyproject: str) -> str:
    section = pyproject.split('[project.entry-points."prism.plugins"]', 1)[1].split("\n[", 1)[0]
    lines = re.findall(r'^([\w-]+) = "([\w.:]+)"', section, re.MULTILINE)
    return "[prism.plugins]\n" + "".join(f"{n} = {v}\n" for n, v in lines)


def write_example(root: Path) -> tuple[Path, Path]:
    """The example project under ``root``, and a site directory with its ``.dist-info``:
    ``(sources, site)``."""
    files = example_files()
    for path, text in files.items():
        target = root / "prism-plugin-acme" / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    src = root / "prism-plugin-acme" / "src"
    (src / "prism_plugin_acme" / "__init__.py").write_text("", encoding="utf-8")
    site = root / "site"
    info = site / "prism_plugin_acme-0.1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: prism-plugin-acme\nVersion: 0.1.0\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text(_entry_points(files["pyproject.toml"]), "utf-8")
    return src, site


@pytest.fixture
def acme(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[prism.extending.PluginSet]:
    src, site = write_example(tmp_path)
    monkeypatch.syspath_prepend(str(src))
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    ps = prism.extending.reload_plugins(
        prism.extending.PluginSettings(strict=True, allow=("acme",))
    )
    yield ps
    for name in [m for m in sys.modules if m.startswith("prism_plugin_acme")]:
        del sys.modules[name]
    prism.extending.reload_plugins(prism.extending.PluginSettings())


def _verdict(decision: prism.Decision, variant: str) -> prism.Candidate:
    return next(c for c in decision.candidates if c.variant == variant)


def test_the_page_holds_the_whole_example() -> None:
    files = example_files()
    assert set(files) == {
        "pyproject.toml",
        f"{PACKAGE}/plugin.py",
        f"{PACKAGE}/variants.py",
        f"{PACKAGE}/hardware/acme/npu1.yaml",
    }
    for path, text in files.items():
        if path.endswith(".py"):
            compile(text, path, "exec")
    assert "acme = " in _entry_points(files["pyproject.toml"])


def test_the_example_device_file_is_valid(tmp_path: Path) -> None:
    write_example(tmp_path)
    (report,) = prism.hardware.validate_paths(
        [tmp_path / "prism-plugin-acme" / PACKAGE / "hardware"]
    )
    assert report.valid, report.problems
    assert report.device_type == "acme.npu1"


def test_the_example_plugin_loads_with_its_variants(acme: prism.extending.PluginSet) -> None:
    record = acme.records["acme"]
    assert record.status == "loaded", record.reason
    assert record.backends == ["acme"]
    assert len(record.hardware_dirs) == 1
    assert [v.name for v in record.variants] == ["acme.npu_matmul", "acme.blocked_matmul"]
    assert {v.name for v in prism.get_op("matmul").variants} >= {
        "acme.npu_matmul",
        "acme.blocked_matmul",
        "numpy.matmul",
    }
    state = acme.backend("acme").availability()
    assert (state.available, state.reason) == (False, "acme-runtime is not installed")
    # Discovery imported the variants module (cheap), not the framework it names.
    assert "acme_runtime" not in sys.modules


def test_the_npu_variant_where_the_page_says(acme: prism.extending.PluginSet) -> None:
    big = ArraySpec((1024, 1024), "bf16")
    with prism.device("acme.npu1", simulate=True):
        decision = prism.explain("matmul", big, big)
        assert decision.chosen == "acme.npu_matmul"
        assert (decision.chosen_backend, decision.executed) == ("acme", "numpy.matmul")
        # dtype_support: the NPU's matrix engine does not take float64.
        wide = ArraySpec((1024, 1024), "float64")
        refused = prism.explain("matmul", wide, wide)
        assert _verdict(refused, "acme.npu_matmul").reasons == (
            "acme.npu1: no feature accelerates matmul in fp64",
        )
        small = ArraySpec((16, 16), "bf16")
        declined = prism.explain("matmul", small, small)
        assert _verdict(declined, "acme.npu_matmul").reasons == (
            "can_run: too small for the NPU (256 elements)",
        )
    # The CPU kernel does not run on the NPU, nor the NPU variant on a CPU.
    assert _verdict(decision, "acme.blocked_matmul").reasons == (
        "'numpy' does not drive acme.npu1 (kind is 'npu', required 'cpu')",
    )


@pytest.mark.parametrize("cpu", ["generic.x86-64-v4", "intel.xeon-platinum-8480", "amd.epyc-9654"])
def test_the_cpu_kernel_runs_where_the_cpu_has_avx512(
    acme: prism.extending.PluginSet, cpu: str
) -> None:
    a = ArraySpec((512, 512), "float32")
    with prism.device(cpu, simulate=True):
        assert prism.explain("matmul", a, a).chosen == "acme.blocked_matmul"
        ints = ArraySpec((512, 512), "int32")
        decision = prism.explain("matmul", ints, ints)
    assert decision.chosen == "numpy.matmul"
    assert _verdict(decision, "acme.blocked_matmul").reasons == (
        "can_run: the blocked kernel takes float32 or float64 matrices, not int32 and int32",
    )


@pytest.mark.parametrize("cpu", ["generic.x86-64-v3", "aws.graviton3"])
def test_the_cpu_kernel_is_refused_without_avx512(
    acme: prism.extending.PluginSet, cpu: str
) -> None:
    a = ArraySpec((512, 512), "float32")
    with prism.device(cpu, simulate=True):
        decision = prism.explain("matmul", a, a)
    assert decision.chosen == "numpy.matmul"
    assert _verdict(decision, "acme.blocked_matmul").reasons == (
        f"{cpu}: {cpu} has no feature, attribute or CPU flag 'avx512f' (required True)",
    )


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "complex64", "float16"])
@pytest.mark.parametrize("shapes", [((256, 256), (256, 256)), ((8, 8), (8, 8)), ((64,), (64,))])
def test_can_run_answers_arrays_and_specs_alike(
    acme: prism.extending.PluginSet, dtype: str, shapes: tuple[tuple[int, ...], ...]
) -> None:
    by_name = {v.name: v for v in prism.get_op("matmul").variants}
    for name in ("acme.npu_matmul", "acme.blocked_matmul"):
        can_run = by_name[name].can_run
        assert can_run is not None
        arrays = [np.zeros(s, dtype) for s in shapes]
        specs = [ArraySpec(s, dtype) for s in shapes]
        assert can_run(*arrays) == can_run(*specs), (name, dtype, shapes)


def test_a_call_on_this_host(acme: prism.extending.PluginSet) -> None:
    """For real: the kernel runs where this host's CPU description lists avx512f, NumPy's
    matmul elsewhere, and either way the result is the product."""
    rng = np.random.default_rng(3)
    a = rng.normal(size=(300, 700)).astype(np.float32)
    b = rng.normal(size=(700, 500)).astype(np.float32)
    decision = prism.explain("matmul", a, b)
    host = prism.hardware.present_devices().devices[0].description
    if "avx512f" in host.cpu_flags:
        assert decision.chosen == "acme.blocked_matmul"
    else:
        assert decision.chosen == "numpy.matmul"
        (reason,) = _verdict(decision, "acme.blocked_matmul").reasons
        assert "'avx512f'" in reason
    result = prism.matmul(a, b)
    assert result.dtype == np.float32
    np.testing.assert_allclose(result, a @ b, rtol=1e-4, atol=1e-3)


def test_the_cpu_kernel_passes_the_conformance_suite(acme: prism.extending.PluginSet) -> None:
    report = check_backend("numpy")
    mine = [r for r in report.results if r.name.startswith("acme.blocked_matmul")]
    assert [r for r in mine if r.status == "passed"], str(report)
    assert not [r for r in mine if r.status == "failed"], str(report)
    # The NPU's backend is not here: its checks are skipped with its own reason.
    npu = check_backend("acme")
    assert npu.ok and npu.skipped[-1].detail == "backend unavailable: acme-runtime is not installed"


@pytest.mark.timeout(300)
def test_the_explain_lines_of_the_page(tmp_path: Path) -> None:
    """The ``prism explain`` commands of the page, run with the example installed: each says
    what the page says under it."""
    src, site = write_example(tmp_path)
    text = GUIDE.read_text("utf-8")
    block = text.split("Check the choice without the hardware", 1)[1].split("```console\n", 1)[1]
    runs: list[tuple[list[str], list[str]]] = []
    for line in block.split("```", 1)[0].splitlines():
        if line.startswith("$ prism "):
            runs.append((line.split()[2:], []))
        else:
            assert line.startswith("#"), line
            runs[-1][1].append(line[1:].strip())
    assert len(runs) == 4 and all(promised for _, promised in runs)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PRISM_")}
    env.update(
        PYTHONPATH=os.pathsep.join([str(src), str(site)]),
        PRISM_CACHE_DIR=str(tmp_path / "cache"),
        PRISM_STRICT_PLUGINS="1",
        PYTHONDONTWRITEBYTECODE="1",
    )
    for args, promised in runs:
        proc = subprocess.run(
            [sys.executable, "-m", "prism_core", *args],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,
            timeout=240,
        )
        assert proc.returncode in (0, 1), proc.stdout + proc.stderr
        for line in promised:
            assert line in proc.stdout, (args, line, proc.stdout)
