"""Plugins: the builtin NumPy plugin in-process, and real third-party plugins installed for real.

* Fast, in-process: :class:`prism_core.extending.PluginSet` with explicit settings on this
environment
  (where only the builtins are installed), and the failure modes of ``plugins/prism-plugin-broken``
  made discoverable by putting its sources and a ``.dist-info`` on ``sys.path``.
* Slow (``-m 'not slow'`` deselects them): a fresh virtual environment outside the repository
  with prism-core, ``plugins/prism-plugin-cuda`` and ``plugins/prism-plugin-broken`` installed by
  pip, and the ``prism`` command of that environment run in subprocesses: every plugin is
  reported with its status and reason, everything else keeps working, the switches do what they
  say, and the cuda plugin's own test suite passes there.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
import warnings
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import prism_core
from prism_core.kernel.config import PluginSettings
from prism_core.kernel.dispatch.catalogue import CATALOGUE
from prism_core.kernel.plugins import PluginError, PluginSet

from .conftest import REPO, make_venv, put_distribution_on_path

PLUGINS = REPO / "plugins"
CUDA_PLUGIN = PLUGINS / "prism-plugin-cuda"
BROKEN_PLUGIN = PLUGINS / "prism-plugin-broken"
CUDA_DEVICES = {"nvidia.rtx-4090", "nvidia.rtx-6000-ada", "nvidia.l40s"}
BROKEN = ("broken-import", "broken-raises", "broken-returns", "broken-signature", "broken-hookname")
#: What each broken plugin's recorded reason must say.
BROKEN_REASONS: Mapping[str, tuple[str, ...]] = {
    "broken-import": ("import failed: ImportError: ", "cannot be imported (deliberately broken)"),
    "broken-raises": ("prism_backends raised RuntimeError: ", "exploded (deliberately broken)"),
    "broken-returns": ("prism_hardware_dirs returned int, expected a list of paths",),
    "broken-signature": ("invalid hook implementation: ", "self_made_arg"),
    "broken-hookname": ("unknown hook 'prism_backend' (did you mean 'prism_backends'?)",),
}
HEAVY = "prism_fake_heavy_framework"

#: Guards against a hung install, not performance expectations.
INSTALL_GUARD_S = 900
RUN_GUARD_S = 300


def _cuda_plugin_version() -> str:
    text = (CUDA_PLUGIN / "src" / "prism_plugin_cuda" / "__init__.py").read_text(encoding="utf-8")
    match = re.search(r'^__version__ = "([^"]+)"$', text, re.MULTILINE)
    assert match, "prism_plugin_cuda/__init__.py defines no __version__"
    return match.group(1)


# =============================================================================================
# Fast: the builtin plugin, in-process
# =============================================================================================


@pytest.fixture
def builtins_only() -> PluginSet:
    return PluginSet(PluginSettings(autoload=False))


def test_numpy_builtin_is_loaded(builtins_only: PluginSet) -> None:
    record = builtins_only.records["numpy"]
    assert record.status == "loaded", record.reason
    assert (record.origin, record.target) == ("builtin", "prism_core._builtin.numpy_backend")
    assert (record.distribution, record.version) == ("prism-core", prism_core.__version__)
    assert record.backends == ["numpy"]
    assert record.reason == ""
    assert builtins_only.failed == []
    assert "numpy" in [r.name for r in builtins_only.loaded]


def test_numpy_backend(builtins_only: PluginSet) -> None:
    backend = builtins_only.backend("numpy")
    assert isinstance(backend, prism_core.extending.Backend)
    assert (backend.name, dict(backend.drives)) == ("numpy", {"kind": "cpu"})
    state = backend.availability()
    assert isinstance(state, prism_core.extending.Availability)
    assert state
    assert (state.available, state.version, state.reason) == (True, np.__version__, "")


def test_numpy_backend_arrays(builtins_only: PluginSet) -> None:
    backend = builtins_only.backend("numpy")
    data = [[1, 2], [3, 4]]
    array = backend.asarray(data, dtype="float32")
    assert isinstance(array, np.ndarray)
    assert array.dtype == np.float32
    np.testing.assert_array_equal(backend.to_numpy(array), np.array(data, dtype=np.float32))
    host = np.arange(6.0)
    assert backend.asarray(host) is host  # no copy when none is needed

    imported = backend.from_dlpack(host)
    assert isinstance(imported, np.ndarray)
    assert np.shares_memory(imported, host)  # DLPack: zero copy on the same device
    np.testing.assert_array_equal(backend.from_dlpack([1, 2, 3]), [1, 2, 3])

    empty = backend.empty((2, 3), np.int16)
    assert (empty.shape, empty.dtype) == ((2, 3), np.int16)
    backend.synchronize()
    assert backend.launch(lambda a, b: a + b, 2, b=3) == 5


def test_unknown_backend_name(builtins_only: PluginSet) -> None:
    with pytest.raises(PluginError, match=r"no backend named 'numpi' \(did you mean 'numpy'\?\)"):
        builtins_only.backend("numpi")
    with pytest.raises(PluginError, match="available backends: numpy") as info:
        builtins_only.backend("cuda")
    assert "did you mean" not in str(info.value)
    assert isinstance(info.value, prism_core.PrismError)


def test_builtins_cannot_be_blocked() -> None:
    ps = PluginSet(PluginSettings(autoload=False, block=("numpy",)))
    record = ps.records["numpy"]
    assert record.status == "loaded"
    assert "builtin plugins cannot be blocked" in record.reason
    assert "numpy" in ps.backends


def test_a_plugin_asked_for_must_be_installed() -> None:
    with pytest.raises(PluginError, match="plugin 'no-such-plugin' named in PRISM_PLUGINS is not"):
        PluginSet(PluginSettings(allow=("no-such-plugin",)))


def test_settings_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PRISM_STRICT_PLUGINS", "1")
    monkeypatch.setenv("PRISM_DISABLE_PLUGIN_AUTOLOAD", "yes")
    monkeypatch.setenv("PRISM_PLUGINS", " cuda, ,acme,cuda ")
    monkeypatch.setenv("PRISM_BLOCK_PLUGINS", "x")
    assert PluginSettings.from_environment() == PluginSettings(
        strict=True, autoload=False, allow=("cuda", "acme"), block=("x",)
    )


# =============================================================================================
# Fast: the broken plugins, discovered in-process through a .dist-info on sys.path
# =============================================================================================


def _entry_points_txt(pyproject: Path) -> str:
    """The ``prism.plugins`` entry points of a plugin's pyproject.toml, as entry_points.txt."""
    text = pyproject.read_text(encoding="utf-8")
    section = text.split('[project.entry-points."prism.plugins"]', 1)[1].split("\n[", 1)[0]
    lines = re.findall(r'^([\w-]+) = "([\w.:]+)"$', section, re.MULTILINE)
    assert lines, f"no prism.plugins entry points in {pyproject}"
    return "[prism.plugins]\n" + "".join(f"{n} = {v}\n" for n, v in lines)


@pytest.fixture
def broken_on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """prism-plugin-broken discoverable in this process without installing it."""
    monkeypatch.syspath_prepend(str(BROKEN_PLUGIN / "src"))
    put_distribution_on_path(
        monkeypatch,
        tmp_path / "site",
        "prism-plugin-broken",
        "0.1.0",
        _entry_points_txt(BROKEN_PLUGIN / "pyproject.toml"),
    )
    monkeypatch.setattr(sys, "dont_write_bytecode", True)  # no __pycache__ in plugins/
    yield
    for name in list(sys.modules):
        if name.startswith(("prism_plugin_broken", HEAVY)):
            del sys.modules[name]


@pytest.mark.usefixtures("broken_on_path")
def test_each_broken_plugin_fails_on_its_own() -> None:
    sys.modules.pop(HEAVY, None)
    with pytest.warns(prism_core.extending.PluginWarning) as caught:
        ps = PluginSet(PluginSettings())
    # Discovery from Python warns once per failed plugin, at the line that caused discovery.
    assert sorted(str(w.message).split()[1] for w in caught) == sorted(BROKEN)
    assert {w.filename for w in caught} == {__file__}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        PluginSet(PluginSettings())  # the same failures again: no second warning
    for name, parts in BROKEN_REASONS.items():
        record = ps.records[name]
        assert record.status == "failed", name
        assert (record.distribution, record.version) == ("prism-plugin-broken", "0.1.0")
        for part in parts:
            assert part in record.reason, (name, record.reason)
        assert record.backends == [] and record.hardware_dirs == []
    assert sorted(r.name for r in ps.failed) == sorted(BROKEN)
    heavy = ps.records["heavy-lazy"]
    assert heavy.status == "loaded", heavy.reason
    assert heavy.backends == ["fake-heavy"]
    assert set(ps.backends) >= {"numpy", "fake-heavy"}
    # Discovery imported the plugin, not its framework; using the backend imports it.
    assert HEAVY not in sys.modules
    assert ps.backend("fake-heavy").availability() == prism_core.extending.Availability(
        True, version="1.0"
    )
    assert HEAVY in sys.modules


@pytest.mark.usefixtures("broken_on_path")
def test_strict_mode_stops_at_the_first_failure() -> None:
    with pytest.raises(PluginError) as info:
        PluginSet(PluginSettings(strict=True))
    message = str(info.value)
    assert message.startswith("plugin broken-hookname (prism-plugin-broken 0.1.0) failed: ")
    assert message.endswith("; strict mode is on (PRISM_STRICT_PLUGINS)")
    assert info.value.record is not None and info.value.record.name == "broken-hookname"


@pytest.mark.usefixtures("broken_on_path")
def test_a_broken_plugin_asked_for_by_name_is_an_error() -> None:
    with pytest.raises(PluginError, match=r"asked for by name \(PRISM_PLUGINS\)") as info:
        PluginSet(PluginSettings(allow=("broken-returns",)))
    assert "prism_hardware_dirs returned int" in str(info.value)


@pytest.mark.usefixtures("broken_on_path")
def test_blocked_and_not_loaded() -> None:
    ps = PluginSet(PluginSettings(block=BROKEN, allow=()))
    assert {ps.records[n].status for n in BROKEN} == {"blocked"}
    assert ps.failed == []
    ps = PluginSet(PluginSettings(autoload=False, allow=("heavy-lazy",)))
    assert ps.records["heavy-lazy"].status == "loaded"
    assert {ps.records[n].status for n in BROKEN} == {"not loaded"}


@pytest.mark.usefixtures("broken_on_path")
def test_name_clashes_keep_both_records(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An entry point named like a builtin, or like another distribution's plugin, fails on its
    own: the builtin and the first owner of the name stay loaded, and the clash is reported."""
    put_distribution_on_path(
        monkeypatch,
        tmp_path / "clash-site",
        "prism-plugin-clash",
        "2.0",
        "[prism.plugins]\nnumpy = json\nheavy-lazy = json\n",
    )
    with pytest.warns(prism_core.extending.PluginWarning) as caught:
        ps = PluginSet(PluginSettings())
    assert sum("is taken by" in str(w.message) for w in caught) == 2
    assert ps.records["numpy"].status == "loaded"
    assert ps.records["numpy"].origin == "builtin"
    # The first distribution on sys.path owns a contested name (here the clash, prepended last).
    owner = ps.records["heavy-lazy"]
    assert (owner.status, owner.distribution) == ("loaded", "prism-plugin-clash")
    clashes = {(r.distribution, r.reason) for r in ps.failed if "is taken by" in r.reason}
    assert clashes == {
        (
            "prism-plugin-clash",
            "the name 'numpy' is taken by a builtin plugin; rename the entry point",
        ),
        (
            "prism-plugin-broken",
            "the name 'heavy-lazy' is taken by another plugin; rename the entry point",
        ),
    }


# =============================================================================================
# Slow: the plugins installed for real in a fresh virtual environment
# =============================================================================================


@dataclass(frozen=True)
class Venv:
    root: Path
    python: Path
    prism: Path
    workdir: Path  # outside the repository
    cache_dir: Path

    def env(self, **extra: str) -> dict[str, str]:
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith("PRISM_")
            and k not in {"PYTHONPATH", "PYTHONHOME", "PYTHONWARNINGS", "VIRTUAL_ENV"}
        }
        env.update(
            PRISM_CACHE_DIR=str(self.cache_dir),
            PYTHONNOUSERSITE="1",
            PYTHONDONTWRITEBYTECODE="1",
            PIP_DISABLE_PIP_VERSION_CHECK="1",
        )
        env.update(extra)
        return env

    def run(self, *command: str | Path, **env: str) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run(
            [str(c) for c in command],
            cwd=self.workdir,
            env=self.env(**env),
            capture_output=True,
            text=True,
            timeout=RUN_GUARD_S,
            check=False,
        )
        assert "Traceback" not in proc.stdout + proc.stderr, proc.stdout + proc.stderr
        return proc

    def prism_json(self, *args: str, expect: int = 0, **env: str) -> Any:
        proc = self.run(self.prism, *args, "--json", **env)
        assert proc.returncode == expect, proc.stdout + proc.stderr
        return json.loads(proc.stdout)


def _within(path: Path, directory: Path) -> bool:
    try:
        path.resolve().relative_to(directory.resolve())
    except ValueError:
        return False
    return True


def _pip(venv: Venv, *args: str | Path) -> None:
    proc = subprocess.run(
        [str(venv.python), "-m", "pip", "install", "-q", *(str(a) for a in args)],
        cwd=venv.workdir,
        env=venv.env(),
        capture_output=True,
        text=True,
        timeout=INSTALL_GUARD_S,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Venv:
    root = tmp_path_factory.mktemp("plugins-venv")
    assert not _within(root, REPO), "the temporary directory must lie outside the repository"
    workdir = root / "work"
    workdir.mkdir()
    env_dir = root / "venv"
    python = make_venv(env_dir, timeout=INSTALL_GUARD_S)
    made = Venv(
        root=env_dir,
        python=python,
        prism=python.with_name("prism.exe" if sys.platform == "win32" else "prism"),
        workdir=workdir,
        cache_dir=root / "cache",
    )
    _pip(made, REPO)
    _pip(made, CUDA_PLUGIN, BROKEN_PLUGIN)
    return made


def _records(report: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["name"]: r for r in report["plugins"]}


def _shipped_devices() -> set[str]:
    import yaml

    out = set()
    for path in (REPO / "hardware").rglob("*.yaml"):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        if not data.get("abstract", False):
            out.add(data["device_type"])
    return out


@pytest.mark.slow
def test_plugins_json(venv: Venv) -> None:
    report = venv.prism_json("plugins", expect=1)  # exit 1: some plugins failed
    records = _records(report)
    assert set(records) == {"numpy", "cuda", "heavy-lazy", *BROKEN}

    numpy_record = records["numpy"]  # the one builtin plugin
    assert (numpy_record["status"], numpy_record["origin"]) == ("loaded", "builtin")

    cuda = records["cuda"]
    assert cuda["status"] == "loaded", cuda["reason"]
    assert cuda["origin"] == "entry point"
    assert (cuda["distribution"], cuda["version"]) == ("prism-plugin-cuda", _cuda_plugin_version())
    assert cuda["target"] == "prism_plugin_cuda.plugin"
    assert cuda["backends"] == ["cuda"]
    assert len(cuda["hardware_dirs"]) == 1
    hardware_dir = Path(cuda["hardware_dirs"][0])
    assert _within(hardware_dir, venv.root), "the device dir must come from the installed wheel"
    assert {p.name for p in hardware_dir.rglob("*.yaml")} == {
        "rtx-4090.yaml",
        "rtx-6000-ada.yaml",
        "l40s.yaml",
    }
    assert cuda["info"]["requires"] == ["cupy-cuda12x>=14.2"]
    assert "prism_detect_devices" in cuda["hooks"]
    assert "prism_variants" in cuda["hooks"]
    # One variant of every op of the catalogue, and cuda.tensor_core_matmul.  (The catalogue,
    # not this process's all_ops(): another test in this worker may have declared an op.)
    assert cuda["variants"] == len(CATALOGUE) + 1

    for name, parts in BROKEN_REASONS.items():
        record = records[name]
        assert record["status"] == "failed", name
        assert record["distribution"] == "prism-plugin-broken"
        for part in parts:
            assert part in record["reason"], (name, record["reason"])

    heavy = records["heavy-lazy"]
    assert heavy["status"] == "loaded", heavy["reason"]
    assert heavy["backends"] == ["fake-heavy"]

    assert report["backends"]["cuda"] == {
        "plugin": "cuda",
        "priority": 10,
        "description": "NVIDIA GPUs through CuPy (AMD GPUs with a ROCm build of CuPy)",
        "drives": {"vendor": "nvidia", "kind": "gpu"},
    }
    assert set(report["backends"]) == {"numpy", "cuda", "fake-heavy"}


@pytest.mark.slow
def test_plugins_text(venv: Venv) -> None:
    proc = venv.run(venv.prism, "plugins")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    rows = {line.split()[0]: line for line in proc.stdout.splitlines() if line.strip()}
    assert "loaded" in rows["cuda"] and "backends: cuda; device dirs: 1" in rows["cuda"]
    assert "prism-plugin-cuda " + _cuda_plugin_version() in rows["cuda"]
    for name in BROKEN:
        assert "failed" in rows[name]
    assert (
        "failed: broken-hookname (prism-plugin-broken 0.1.0): implements unknown hook "
        "'prism_backend' (did you mean 'prism_backends'?)"
    ) in proc.stdout


LISTING_PROBE = textwrap.dedent(
    """
    import json, sys
    import prism_core
    from prism_core._cli import main

    heavy = "prism_fake_heavy_framework"
    status = main(["plugins"])
    after_cli = heavy in sys.modules
    ps = prism_core.extending.plugins()
    after_api = heavy in sys.modules
    frameworks = sorted(m for m in ("torch", "cupy", "jax") if m in sys.modules)
    loaded = ps.records["heavy-lazy"].status
    available = ps.backend("fake-heavy").availability().available
    with open(sys.argv[1], "w") as out:
        json.dump({"status": status, "after_cli": after_cli, "after_api": after_api,
                   "frameworks": frameworks, "loaded": loaded, "available": available,
                   "after_use": heavy in sys.modules}, out)
    """
)


@pytest.mark.slow
def test_listing_plugins_imports_no_heavy_framework(venv: Venv) -> None:
    result = venv.root.parent / "probe.json"
    proc = venv.run(venv.python, "-c", LISTING_PROBE, result)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert json.loads(result.read_text(encoding="utf-8")) == {
        "status": 1,  # `prism plugins` ran (and reported the failed plugins)
        "after_cli": False,
        "after_api": False,
        "frameworks": [],
        "loaded": "loaded",
        "available": True,
        "after_use": True,  # the probe works: using the backend does import the framework
    }


@pytest.mark.slow
def test_devices_keep_working_with_broken_plugins(venv: Venv) -> None:
    proc = venv.run(venv.prism, "devices", "--json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stderr == ""
    listed = {d["device_type"]: d for d in json.loads(proc.stdout)}
    shipped = _shipped_devices()
    assert shipped <= set(listed)
    assert set(listed) - shipped == CUDA_DEVICES
    assert {listed[t]["origin"] for t in CUDA_DEVICES} == {"plugin:cuda"}
    assert {listed[t]["origin"] for t in shipped} == {"builtin"}

    text = venv.run(venv.prism, "devices", "--vendor", "nvidia")
    assert text.returncode == 0, text.stdout + text.stderr
    assert "nvidia.rtx-4090" in text.stdout and "NVIDIA GeForce RTX 4090" in text.stdout


@pytest.mark.slow
def test_show_a_plugin_device(venv: Venv) -> None:
    shown = venv.prism_json("show", "nvidia.rtx-4090")
    assert shown["origin"] == "plugin:cuda"
    assert shown["lineage"] == ["nvidia.rtx-4090", "nvidia.ada", "nvidia.gpu"]
    assert shown["description"]["compute_units"] == 128
    assert shown["provenance"]["features[tensor_cores]"] == "nvidia.ada"

    text = venv.run(venv.prism, "show", "nvidia.rtx-6000-ada")
    assert text.returncode == 0, text.stdout + text.stderr
    assert "(plugin:cuda)" in text.stdout


@pytest.mark.slow
def test_validate_the_plugin_files_with_the_plugin_installed(venv: Venv) -> None:
    hardware = CUDA_PLUGIN / "src" / "prism_plugin_cuda" / "hardware"
    proc = venv.run(venv.prism, "validate", hardware)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "3 files checked: 3 valid, 0 invalid" in proc.stdout


@pytest.mark.slow
def test_doctor_keeps_working_with_broken_plugins(venv: Venv) -> None:
    report = venv.prism_json("doctor")
    backends = report["plugins"]["backends"]
    assert backends["cuda"]["available"] is False
    assert backends["cuda"]["reason"] == "cupy is not installed (pip install cupy-cuda12x)"
    assert backends["fake-heavy"]["available"] is True
    assert backends["numpy"]["available"] is True
    if shutil.which("nvidia-smi", path=venv.env()["PATH"]) is None:
        assert report["devices"]["none_found"]["cuda"] == (
            "nvidia-smi not found: no NVIDIA driver on this host"
        )


# -- dispatch to the plugin's variants --------------------------------------------------------


@pytest.mark.slow
def test_explain_chooses_the_tensor_cores_of_a_simulated_h100(venv: Venv) -> None:
    decision = venv.prism_json(
        "explain",
        "matmul",
        "--device",
        "nvidia.h100-sxm",
        "--dtype",
        "bf16",
        "--shape",
        "4096x4096,4096x4096",
    )
    assert decision["chosen"] == "cuda.tensor_core_matmul"
    assert (decision["chosen_backend"], decision["chosen_device"]) == ("cuda", "nvidia.h100-sxm")
    # The H100 is not here: it is simulated, and the NumPy reference computes.
    assert decision["simulated"] is True
    assert decision["executed"] == "numpy.matmul"
    assert decision["signature"] == ["bfloat16[4096x4096]", "bfloat16[4096x4096]"]
    verdicts = {c["variant"]: c for c in decision["candidates"]}
    assert set(verdicts) == {"cuda.tensor_core_matmul", "cuda.matmul", "numpy.matmul"}
    assert verdicts["cuda.matmul"]["accepted"] is True
    assert verdicts["numpy.matmul"]["reasons"] == [
        "'numpy' does not drive nvidia.h100-sxm (kind is 'gpu', required 'cpu')"
    ]


@pytest.mark.slow
def test_explain_says_why_not_the_tensor_cores(venv: Venv) -> None:
    proc = venv.run(
        venv.prism,
        "explain",
        "matmul",
        "--device",
        "nvidia.l4",
        "--dtype",
        "float64",
        "--shape",
        "4096x4096,4096x4096",
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "chosen: cuda.matmul on cuda for nvidia.l4" in proc.stdout
    assert (
        "- cuda.tensor_core_matmul [cuda, priority 20]: "
        "nvidia.l4: no feature accelerates matmul in fp64"
    ) in proc.stdout

    small = venv.run(
        venv.prism, "explain", "matmul", "--device", "nvidia.l4", "--shape", "16x16,16x16"
    )
    assert small.returncode == 1, small.stdout + small.stderr  # nothing can run it there
    assert "chosen: none: no installed variant can run here" in small.stdout
    assert (
        "- cuda.matmul [cuda, priority 10] on nvidia.l4: can_run: too small to be worth a "
        "device transfer (256 elements, fewer than 4096)"
    ) in small.stdout


# -- the switches -----------------------------------------------------------------------------


@pytest.mark.slow
def test_strict_mode(venv: Venv) -> None:
    proc = venv.run(venv.prism, "devices", PRISM_STRICT_PLUGINS="1")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert proc.stdout == ""
    assert proc.stderr.startswith(
        "prism devices: error: plugin broken-hookname (prism-plugin-broken 0.1.0) failed: "
        "implements unknown hook 'prism_backend' (did you mean 'prism_backends'?); "
        "strict mode is on (PRISM_STRICT_PLUGINS)"
    ), proc.stderr


@pytest.mark.slow
def test_block_the_broken_plugins(venv: Venv) -> None:
    report = venv.prism_json("plugins", PRISM_BLOCK_PLUGINS=",".join(BROKEN))  # exit 0
    records = _records(report)
    for name in BROKEN:
        assert records[name]["status"] == "blocked"
        assert records[name]["reason"] == "named in PRISM_BLOCK_PLUGINS"
    assert {records[n]["status"] for n in ("numpy", "cuda", "heavy-lazy")} == {"loaded"}


@pytest.mark.slow
def test_autoload_off(venv: Venv) -> None:
    records = _records(venv.prism_json("plugins", PRISM_DISABLE_PLUGIN_AUTOLOAD="1"))
    assert records["numpy"]["status"] == "loaded"
    others = set(records) - {"numpy"}
    assert others == {"cuda", "heavy-lazy", *BROKEN}
    assert {records[n]["status"] for n in others} == {"not loaded"}
    assert "PRISM_DISABLE_PLUGIN_AUTOLOAD" in records["cuda"]["reason"]

    devices = venv.prism_json("devices", PRISM_DISABLE_PLUGIN_AUTOLOAD="1")
    assert {d["device_type"] for d in devices} == _shipped_devices()


@pytest.mark.slow
def test_autoload_off_with_one_plugin_named(venv: Venv) -> None:
    env = {"PRISM_DISABLE_PLUGIN_AUTOLOAD": "1", "PRISM_PLUGINS": "cuda"}
    records = _records(venv.prism_json("plugins", **env))
    assert records["cuda"]["status"] == "loaded"
    assert records["cuda"]["requested"] is True
    assert {records[n]["status"] for n in ("heavy-lazy", *BROKEN)} == {"not loaded"}
    devices = {d["device_type"] for d in venv.prism_json("devices", **env)}
    assert devices >= CUDA_DEVICES


@pytest.mark.slow
def test_only_the_named_plugins(venv: Venv) -> None:
    records = _records(venv.prism_json("plugins", PRISM_PLUGINS="cuda,heavy-lazy"))
    assert {records[n]["status"] for n in ("numpy", "cuda", "heavy-lazy")} == {"loaded"}
    assert {records[n]["status"] for n in BROKEN} == {"not loaded"}
    assert records["broken-raises"]["reason"] == "not named in PRISM_PLUGINS"


@pytest.mark.slow
def test_a_broken_plugin_asked_for_by_name(venv: Venv) -> None:
    proc = venv.run(venv.prism, "plugins", PRISM_PLUGINS="broken-raises")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert proc.stderr.startswith(
        "prism plugins: error: plugin broken-raises (prism-plugin-broken 0.1.0) failed: "
        "prism_backends raised RuntimeError: "
    ), proc.stderr
    assert "it was asked for by name (PRISM_PLUGINS)" in proc.stderr


@pytest.mark.slow
def test_a_misspelled_plugin_name(venv: Venv) -> None:
    proc = venv.run(venv.prism, "plugins", PRISM_PLUGINS="cdua")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "plugin 'cdua' named in PRISM_PLUGINS is not installed" in proc.stderr
    assert "(did you mean 'cuda'?)" in proc.stderr


@pytest.mark.slow
def test_builtins_cannot_be_blocked_from_the_environment(venv: Venv) -> None:
    records = _records(venv.prism_json("plugins", expect=1, PRISM_BLOCK_PLUGINS="numpy"))
    assert records["numpy"]["status"] == "loaded"
    assert records["numpy"]["reason"] == (
        "builtin plugins cannot be blocked; PRISM_BLOCK_PLUGINS ignored"
    )
    proc = venv.run(venv.prism, "plugins", PRISM_BLOCK_PLUGINS="numpy")
    assert "loaded: numpy (prism-core " in proc.stdout
    assert "builtin plugins cannot be blocked" in proc.stdout


# -- the cuda plugin's own tests --------------------------------------------------------------


@pytest.mark.slow
def test_the_cuda_plugin_suite_passes_where_it_is_installed(venv: Venv) -> None:
    _pip(venv, "pytest")
    proc = venv.run(
        venv.python,
        "-m",
        "pytest",
        CUDA_PLUGIN / "tests",
        "-q",
        "-rs",
        "-p",
        "no:cacheprovider",  # nothing written into the repository
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert re.search(r"\b\d+ passed\b", proc.stdout), proc.stdout
    assert "failed" not in proc.stdout.splitlines()[-1]
    gpu = "needs an NVIDIA GPU with CUDA"
    if gpu not in proc.stdout:  # the GPU tests ran: nothing was skipped for want of a GPU
        assert "skipped" not in proc.stdout.splitlines()[-1]
