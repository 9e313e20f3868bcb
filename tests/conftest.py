"""Shared fixtures: every test runs with its own cache directory and no user search path."""

from __future__ import annotations

import functools
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

import prism_core
import prism_core._tuning.tuning_records as tuning
import prism_core.kernel.description.library as library
import prism_core.kernel.plugins as plugins

REPO = Path(__file__).resolve().parents[1]
HARDWARE = REPO / "hardware"
SCHEMA = REPO / "schemas" / "device.schema.json"
#: A byte-for-byte copy of ../shared/examples/seed-device.yaml, the original example of the
#: format, so that the tests run in a clone without shared/ (test_seed_copy checks the copy).
SEED = REPO / "tests" / "data" / "seed-device.yaml"
SHARED_SEED = REPO.parent / "shared" / "examples" / "seed-device.yaml"


@pytest.fixture(autouse=True)
def _isolated_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[None]:
    monkeypatch.setenv("PRISM_CACHE_DIR", str(tmp_path_factory.mktemp("prism-cache")))
    monkeypatch.delenv("PRISM_HARDWARE_PATH", raising=False)
    for name in (
        "PRISM_NO_CACHE",
        "PRISM_STRICT_PLUGINS",
        "PRISM_PLUGINS",
        "PRISM_BLOCK_PLUGINS",
    ):
        monkeypatch.delenv(name, raising=False)
    # The core's tests see the builtin plugins only, whatever else is installed beside them
    # (the plugins in plugins/ are installed for their own suites); a test of discovery turns
    # autoload back on, or runs in a virtual environment of its own.
    monkeypatch.setenv("PRISM_DISABLE_PLUGIN_AUTOLOAD", "1")
    library._default = None
    plugins._current = None
    plugins._warned.clear()  # each test sees the once-per-process plugin warnings afresh
    # Each test's tuning records are its own cache directory's (none unless it tunes).
    tuning._state.fingerprint = tuning._state.store = tuning._state.records = None
    yield
    library._default = None
    plugins._current = None


#: The plugins bundled in plugins/, installed beside prism-core by the README's test command.
BUNDLED_PLUGINS = ("scipy", "torch", "cuda")


def autoload_settings(**options: object) -> object:
    """Plugin settings with autoload on, as users have them, but without the bundled plugins
    (for tests of discovery itself, whose expectations are about their own test plugins)."""
    import prism_core

    return prism_core.extending.PluginSettings(block=BUNDLED_PLUGINS, **options)  # type: ignore[arg-type]


def autoload_env(**extra: str) -> dict[str, str]:
    """The environment of a subprocess with autoload on and the bundled plugins blocked."""
    env = {k: v for k, v in os.environ.items() if k != "PRISM_DISABLE_PLUGIN_AUTOLOAD"}
    env["PRISM_BLOCK_PLUGINS"] = ",".join(BUNDLED_PLUGINS)
    env.update(extra)
    return env


@pytest.fixture
def write_yaml(tmp_path: Path) -> Callable[[str, str], Path]:
    """Write a dedented YAML text to ``tmp_path / name`` and return its path."""

    def write(name: str, text: str) -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
        return path

    return write


def put_distribution_on_path(
    monkeypatch: pytest.MonkeyPatch, site: Path, name: str, version: str, entry_points: str
) -> None:
    """Make a distribution's ``.dist-info`` (metadata and ``entry_points.txt``) visible to
    ``importlib.metadata`` in this process: real entry-point discovery without installing."""
    info = site / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text(entry_points, encoding="utf-8")
    monkeypatch.syspath_prepend(str(site))


def make_venv(
    path: Path, *, timeout: float, env: Mapping[str, str] | None = None, cwd: Path | None = None
) -> Path:
    """A clean virtual environment (no system site-packages) at ``path``; its interpreter.

    Skips the calling test, saying why, where ``python -m venv`` cannot make one.
    """
    try:
        subprocess.run(
            [sys.executable, "-m", "venv", str(path)],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=True,
        )
    except (subprocess.CalledProcessError, OSError) as exc:
        detail = getattr(exc, "stderr", "") or str(exc)
        pytest.skip(f"cannot create a virtual environment with `python -m venv` here: {detail}")
    scripts = path / ("Scripts" if sys.platform == "win32" else "bin")
    python = scripts / ("python.exe" if sys.platform == "win32" else "python")
    if not python.exists():
        pytest.skip(f"`python -m venv` made no interpreter at {python}")
    return python


def load_bundled_plugin(*names: str) -> Any:
    """Load the installed plugins ``names`` (the bundled ones: torch, jax, ...) through their
    entry points, the only ones (the suite's environment loads no plugin by itself), or skip
    the test saying which is not installed; the caller reloads the plugins afterwards
    (``prism_core.extending.reload_plugins()``).  Returns the plugin set."""
    ps = prism_core.extending.reload_plugins(prism_core.extending.PluginSettings(allow=names))
    for name in names:
        record = ps.records.get(name)
        if record is None or record.status != "loaded":
            prism_core.extending.reload_plugins()
            pytest.skip(f"prism-plugin-{name} is not installed and loadable in this environment")
    return ps


@pytest.fixture
def torch_and_jax() -> Iterator[Any]:
    """The installed torch and jax plugins, loaded through their entry points (skips where
    either is missing); the plugins are reloaded after the test.  Yields the plugin set."""
    yield load_bundled_plugin("torch", "jax")
    prism_core.extending.reload_plugins()


def problems_of(text: str) -> list[str]:
    """The problems ``prism validate`` would report of a device file holding ``text``."""
    from prism_core.kernel.description.schema import validate_parsed
    from prism_core.kernel.description.yaml_loader import parse_yaml

    parsed, problems = parse_yaml(text, "d.yaml")
    assert problems == [], problems
    assert parsed is not None
    return [str(p) for p in validate_parsed(parsed, "d.yaml")]


@functools.cache
def shipped_library() -> prism_core.hardware.DeviceLibrary:
    """The devices of hardware/ alone, read without the validation cache (once a process)."""
    hw = prism_core.hardware
    return hw.DeviceLibrary([hw.SearchEntry(HARDWARE, "builtin")], use_cache=False)


def run_prism(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``prism *args`` in a fresh process, in ``tmp_path``, with no ``PRISM_`` setting of this
    environment, its own cache directory and plugin autoloading off."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PRISM_")}
    env["PRISM_CACHE_DIR"] = str(tmp_path / "cache")
    env["PRISM_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    return subprocess.run(
        [sys.executable, "-m", "prism_core", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )


def load_test_plugin(monkeypatch: pytest.MonkeyPatch, site: Path, name: str, module: str) -> None:
    """Install the test plugin ``module`` as a distribution in ``site`` with a real
    ``prism.plugins`` entry point ``name``, and load it alone (strict)."""
    put_distribution_on_path(
        monkeypatch, site, f"prism-test-{name}", "1.0", f"[prism.plugins]\n{name} = {module}\n"
    )
    ps = prism_core.extending.reload_plugins(
        prism_core.extending.PluginSettings(strict=True, allow=(name,))
    )
    assert ps.records[name].status == "loaded"


#: A plugin whose one hook returns a detection module's ``detect(library)``.
_DETECTION_PLUGIN = """\
from prism_core.extending import hookimpl
from prism_core.{module} import detect

@hookimpl
def prism_detect_devices(library):
    return detect(library)
"""


def detected_through_plugin(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, module: str, name: str
) -> list[Any]:
    """The devices ``present_devices()`` gives through a real plugin distribution ``name``,
    the only plugin loaded, whose hook returns ``prism_core.<module>.detect(library)``."""
    site = tmp_path / "site"
    site.mkdir(exist_ok=True)
    (site / f"prism_test_{name}.py").write_text(
        _DETECTION_PLUGIN.format(module=module), encoding="utf-8"
    )
    entry = f"[prism.plugins]\n{name} = prism_test_{name}\n"
    put_distribution_on_path(monkeypatch, site, f"prism-test-{name}", "1.0", entry)
    monkeypatch.setenv("PRISM_PLUGINS", name)
    return [d for d in prism_core.hardware.present_devices().devices if d.source == name]


@pytest.fixture
def simgpu(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A simulated H100 PCIe reported present, with its own backend (NumPy behind a GPU array
    type: ``tests/simulated_gpu_plugin.py``), through a real entry point."""
    load_test_plugin(monkeypatch, tmp_path / "site", "simgpu", "tests.simulated_gpu_plugin")
    present = prism_core.hardware.present_devices().devices
    assert "nvidia.h100-pcie" in [d.device_type for d in present]
    yield
    prism_core.extending.reload_plugins()


@pytest.fixture
def loopback(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The test-only ``loopback`` backend (``tests/loopback_plugin.py``), which drives any
    device and computes with NumPy, through a real entry point."""
    load_test_plugin(monkeypatch, tmp_path / "site", "loopback", "tests.loopback_plugin")
    yield
    prism_core.extending.reload_plugins()


@pytest.fixture
def torch_plugin() -> Iterator[Any]:
    """torch, with the installed torch plugin loaded through its entry point (skips where
    either is missing); the plugins are reloaded after the test."""
    torch = pytest.importorskip("torch", reason="the torch backend's variants need torch")
    load_bundled_plugin("torch")
    yield torch
    prism_core.extending.reload_plugins()


@pytest.fixture
def jax_without_x64() -> Iterator[None]:
    """JAX in its default mode (no 64-bit dtypes) for the test, whatever this worker's
    ``JAX_ENABLE_X64`` says (the jax plugin's conftest turns it on for the whole process when
    its tests are collected): what a placement on jax holds depends on it."""
    try:
        import jax
    except ImportError:
        yield
        return
    from prism_core.kernel.dispatch import registry

    before = bool(jax.config.jax_enable_x64)
    jax.config.update("jax_enable_x64", False)
    registry.bump()  # plans judged what jax holds in the other mode
    try:
        yield
    finally:
        jax.config.update("jax_enable_x64", before)
        registry.bump()
