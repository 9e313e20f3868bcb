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
from types import ModuleType
from typing import Any

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


# -- the plugins the page shows whole, and the reference it documents ---------------------------
#: The bundled plugins the page shows whole, each after a marker naming its file: the page's
#: copy is the file, byte for byte.
MIRRORED = {
    "jax": "plugins/prism-plugin-jax/src/prism_plugin_jax/plugin.py",
    "mlx": "plugins/prism-plugin-mlx/src/prism_plugin_mlx/plugin.py",
}
MIRROR = re.compile(r"<!-- the (\w+) plugin: (\S+) -->\n```python\n(.*?\n)```\n", re.DOTALL)


def _section(start: str, end: str) -> str:
    text = GUIDE.read_text("utf-8")
    return text.split(start, 1)[1].split(end, 1)[0]


def test_every_plugin_the_page_shows_whole_is_checked() -> None:
    shown = {name: path for name, path, _ in MIRROR.findall(GUIDE.read_text("utf-8"))}
    assert shown == MIRRORED


@pytest.mark.parametrize("name", sorted(MIRRORED))
def test_the_page_shows_the_plugin_as_it_is(name: str) -> None:
    """Each marker is followed by its file, byte for byte: edit the plugin, then copy it here
    (an in-tree file, so never skipped)."""
    shown = {n: body for n, _, body in MIRROR.findall(GUIDE.read_text("utf-8"))}
    source = REPO / MIRRORED[name]
    assert source.is_file(), f"{MIRRORED[name]} is shown in the guide but does not exist"
    assert shown[name] == source.read_text("utf-8"), (
        f"docs/writing-a-plugin.md shows an old {MIRRORED[name]}: copy the file into the block "
        f"after its marker"
    )


def test_the_namespace_backend_table_names_every_option() -> None:
    """Every attribute and method NamespaceBackend defines, and the contract's attributes it
    uses, are in "Your library already speaks the Array API"."""
    from prism_core.backend_kit import NamespaceBackend

    section = _section("## Your library already speaks the Array API", "### Two whole plugins")
    names = {n for n in vars(NamespaceBackend) if not n.startswith("_")}
    names |= {"name", "description", "priority", "aliases", "drives"}
    names |= {"thread_modules", "transfer", "compiles", "settings", "can_drive", "shutdown"}
    names |= {"jit", "numpy_defaults"}
    missing = sorted(n for n in names if f"`{n}`" not in section and f"`{n}(" not in section)
    assert not missing, f"not in the guide's NamespaceBackend table: {missing}"


def _parameters(signature: str) -> list[str]:
    """The parameter names of ``name(a: int, b: tuple[int, ...] = (1,)) -> X`` as the page
    writes it: the commas outside brackets split them."""
    depth, parts = 0, [""]
    for char in signature.split("(", 1)[1]:
        depth += (char in "([") - (char in ")]")
        if depth < 0:
            break
        if char == "," and depth == 0:
            parts.append("")
        else:
            parts[-1] += char
    return [p.split(":")[0].split("=")[0].strip() for p in parts if p.strip()]


def test_the_reference_helpers_are_documented_with_their_signatures() -> None:
    """Each public name of prism_core.reference has a row in "Computing an op the reference
    computes", with the parameters the function has."""
    import inspect

    from prism_core import reference

    section = _section("## Computing an op the reference computes", "\n## ")
    rows = {
        m[1]: m[0] for m in re.findall(r"^\| `((\w+)(?:\(.*?\))?[^`]*)` \|", section, re.MULTILINE)
    }
    assert set(rows) == set(reference.__all__)
    for name in reference.__all__:
        helper = getattr(reference, name)
        if not inspect.isfunction(helper):
            continue
        expected = list(inspect.signature(helper).parameters)
        assert _parameters(rows[name]) == expected, (name, rows[name])


def _mlx_like_core() -> ModuleType:
    """tests/mlx_like.py as ``mlx.core``, at MLX's version."""
    from . import mlx_like

    core = ModuleType("mlx.core")
    core.__dict__.update({k: v for k, v in vars(mlx_like).items() if not k.startswith("__")})
    core.__dict__["__version__"] = "0.32.4"
    return core


@pytest.fixture(params=["mlx_like", "mlx"])
def almost(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The page's backend of a library that almost speaks the Array API, over the MLX-like
    library (always) and over MLX (where it is installed)."""
    if request.param == "mlx":
        pytest.importorskip("mlx.core", reason="MLX is not installed (pip install 'mlx[cpu]')")
    else:
        core = _mlx_like_core()
        package = ModuleType("mlx")
        package.__path__ = []
        package.core = core  # type: ignore[attr-defined]
        monkeypatch.setitem(sys.modules, "mlx", package)
        monkeypatch.setitem(sys.modules, "mlx.core", core)
    section = _section("### A library that almost speaks it", "### Two whole plugins")
    (code,) = [b for b in section.split("```python\n")[1:] if "class MlxBackend" in b]
    scope: dict[str, Any] = {"__name__": "the_guide"}
    exec(compile(code.split("\n```", 1)[0], str(GUIDE), "exec"), scope)
    return scope["backend"]


def test_the_almost_array_api_example_gives_prisms_semantics(almost: Any) -> None:
    import mlx.core as mx

    backend = almost
    assert backend.availability().available, backend.availability().reason

    def host(op: str, *args: Any, **kwargs: Any) -> np.ndarray:
        out = backend.function(op)(*args, **kwargs)
        assert backend.owns(out)
        return np.asarray(backend.to_numpy(out))

    data = np.array([0.1, 1e-300])  # no float32 holds 1e-300
    assert backend.to_numpy(backend.make_array(data)).dtype == np.float64
    assert host("zeros", (2,)).dtype == np.float64  # default_dtypes: NumPy's, not float32
    x = backend.make_array(np.array([3.0, 1.0, 2.0, 5.0]))
    argmax = host("argmax", x)
    assert (argmax.dtype, int(argmax)) == (np.dtype(np.int64), 3)  # index results: int64
    np.testing.assert_allclose(host("std", x, correction=1), np.std([3, 1, 2, 5], ddof=1))
    np.testing.assert_array_equal(host("sort", x, descending=True), [5, 3, 2, 1])
    ints = backend.make_array(np.array([1, 2, 3]))
    np.testing.assert_array_equal(host("cumulative_sum", ints, include_initial=True), [0, 1, 3, 6])
    # lazy: the library's error, raised at evaluation, is the reference's inside the variant.
    with pytest.raises(np.linalg.LinAlgError, match="Singular matrix"):
        backend.function("linalg.inv")(backend.make_array(np.zeros((2, 2))))
    # holds: no complex128, refused before anything is made.
    with pytest.raises(TypeError, match="holds no complex128"):
        backend.make_array(np.zeros(2, np.complex128))
    # declines: the crash is never reached.
    inv = backend.declines["linalg.inv"]
    assert inv(ArraySpec((0, 0), "float32")) == (
        "an empty array: mlx.core.linalg.inv crashes on an empty matrix"
    )
    assert inv(ArraySpec((2, 2), "float32")) is True
    assert mx is sys.modules["mlx.core"]
