"""The built wheel works on its own: installed into a fresh virtual environment outside the
repository, it finds its shipped device library and schema inside site-packages.

The wheel and the environment are built once for this module (slow: deselect with -m 'not slow').
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from .conftest import make_venv

REPO = Path(__file__).resolve().parents[1]
SCHEMA = REPO / "schemas" / "device.schema.json"

#: Guards against a hung build or install, not performance expectations.
BUILD_GUARD_S = 900
RUN_GUARD_S = 300

pytestmark = pytest.mark.slow


@dataclass(frozen=True)
class Installed:
    venv: Path
    python: Path
    prism: Path
    workdir: Path  # outside the repository
    cache_dir: Path
    wheel: Path

    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        for name in (
            "PRISM_HARDWARE_PATH",
            "PRISM_NO_CACHE",
            "PRISM_DEBUG",
            "PYTHONPATH",
            "PYTHONHOME",
            "PYTHONWARNINGS",
            "VIRTUAL_ENV",
        ):
            env.pop(name, None)
        env["PRISM_CACHE_DIR"] = str(self.cache_dir)
        env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
        env["PYTHONNOUSERSITE"] = "1"
        return env

    def run(self, *command: str | Path) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run(
            [str(c) for c in command],
            cwd=self.workdir,
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=RUN_GUARD_S,
            check=False,
        )
        assert "Traceback" not in proc.stdout + proc.stderr, proc.stdout + proc.stderr
        return proc


def _within(path: Path, directory: Path) -> bool:
    try:
        path.resolve().relative_to(directory.resolve())
    except ValueError:
        return False
    return True


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    root = tmp_path_factory.mktemp("wheel-install")
    assert not _within(root, REPO), "the temporary directory must lie outside the repository"
    dist = root / "dist"
    workdir = root / "work"
    workdir.mkdir()
    unwanted = ("PYTHONPATH", "PIP_REQUIRE_VIRTUALENV")
    clean_env = {k: v for k, v in os.environ.items() if k not in unwanted}
    clean_env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"

    build = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(dist),
            str(REPO),
        ],
        cwd=workdir,
        env=clean_env,
        capture_output=True,
        text=True,
        timeout=BUILD_GUARD_S,
        check=False,
    )
    assert build.returncode == 0, build.stdout + build.stderr
    wheels = sorted(dist.glob("prism_core-*.whl"))
    assert len(wheels) == 1, f"expected one prism_core wheel in {dist}, found {wheels}"

    venv = root / "venv"
    python = make_venv(venv, timeout=BUILD_GUARD_S, env=clean_env, cwd=workdir)

    install = subprocess.run(
        [str(venv / "bin" / "pip"), "install", str(wheels[0])],
        cwd=workdir,
        env=clean_env,
        capture_output=True,
        text=True,
        timeout=BUILD_GUARD_S,
        check=False,
    )
    assert install.returncode == 0, install.stdout + install.stderr
    return Installed(
        venv=venv,
        python=python,
        prism=venv / "bin" / "prism",
        workdir=workdir,
        cache_dir=root / "cache",
        wheel=wheels[0],
    )


PROBE = textwrap.dedent(
    """
    import json, sys, sysconfig, warnings
    from pathlib import Path

    warnings.simplefilter("error")  # a problem in the shipped library would warn
    import prism_core
    import prism_core.kernel.config

    h100 = prism_core.hardware.get_device("nvidia.h100-sxm")
    print(json.dumps({
        "file": prism_core.__file__,
        "version": prism_core.__version__,
        "purelib": sysconfig.get_paths()["purelib"],
        "hardware": str(prism_core.kernel.config.data_dir("hardware")),
        "schemas": str(prism_core.kernel.config.data_dir("schemas")),
        "devices": [d.device_type for d in prism_core.hardware.devices()],
        "h100": {
            "lineage": list(h100.lineage),
            "features": sorted(h100.features),
            "kind": h100.kind,
            "vendor": h100.vendor,
            "compute_units": h100.compute_units,
            "path": str(h100.path),
        },
        "schema_title": prism_core.hardware.device_schema()["title"],
    }))
    """
)


@pytest.fixture(scope="module")
def probe(installed: Installed) -> dict[str, object]:
    proc = installed.run(installed.python, "-c", PROBE)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads(proc.stdout)
    assert isinstance(data, dict)
    return data


def test_wheel_contains_the_data(installed: Installed) -> None:
    import zipfile

    with zipfile.ZipFile(installed.wheel) as zf:
        names = set(zf.namelist())
    assert "prism_core/_data/schemas/device.schema.json" in names
    assert "prism_core/_data/hardware/nvidia/h100-sxm.yaml" in names
    assert "prism_core/_data/hardware/nvidia/hopper.yaml" in names
    shipped = {
        p.relative_to(REPO / "hardware").as_posix()
        for p in (REPO / "hardware").rglob("*")
        if p.suffix in (".yaml", ".yml") and p.is_file()
    }
    packed = {
        n.removeprefix("prism_core/_data/hardware/")
        for n in names
        if n.startswith("prism_core/_data/hardware/") and not n.endswith("/")
    }
    assert shipped <= packed


def test_installed_package_is_imported_from_the_venv(
    installed: Installed, probe: dict[str, Any]
) -> None:
    file = Path(str(probe["file"]))
    assert _within(file, installed.venv), file
    assert not _within(file, REPO), file
    assert _within(file, Path(str(probe["purelib"])))


def test_installed_package_loads_the_shipped_devices(probe: dict[str, Any]) -> None:
    import prism_core

    assert probe["version"] == prism_core.__version__
    devices = probe["devices"]
    assert isinstance(devices, list)
    assert len(devices) >= 24
    for dtype in ("nvidia.h100-sxm", "amd.mi300x", "aws.graviton3", "generic.x86-64-v3"):
        assert dtype in devices
    h100 = probe["h100"]
    assert isinstance(h100, dict)
    assert h100["lineage"] == ["nvidia.h100-sxm", "nvidia.hopper", "nvidia.gpu"]
    assert {"tensor_cores", "transformer_engine", "tma", "dpx"} <= set(h100["features"])
    assert (h100["kind"], h100["vendor"], h100["compute_units"]) == ("gpu", "nvidia", 132)
    assert probe["schema_title"] == json.loads(SCHEMA.read_text(encoding="utf-8"))["title"]


def test_installed_data_lies_inside_site_packages(
    installed: Installed, probe: dict[str, Any]
) -> None:
    site = Path(str(probe["purelib"]))
    hardware = Path(str(probe["hardware"]))
    assert _within(hardware, site), hardware
    assert not _within(hardware, REPO), hardware
    assert (hardware / "nvidia" / "h100-sxm.yaml").is_file()
    assert _within(Path(str(probe["schemas"])), site)
    h100 = probe["h100"]
    assert isinstance(h100, dict)
    assert _within(Path(str(h100["path"])), site)


def test_installed_cli_validates_its_library(installed: Installed, probe: dict[str, Any]) -> None:
    hardware = Path(str(probe["hardware"]))
    proc = installed.run(installed.prism, "validate", hardware)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    n = sum(1 for p in hardware.rglob("*") if p.suffix in (".yaml", ".yml"))
    assert n >= 24
    assert f"{n} files checked: {n} valid, 0 invalid" in proc.stdout


def test_installed_cli_prints_the_schema(installed: Installed) -> None:
    proc = installed.run(installed.prism, "schema")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert json.loads(proc.stdout) == json.loads(SCHEMA.read_text(encoding="utf-8"))


def test_installed_cli_lists_and_shows_devices(installed: Installed) -> None:
    listed = installed.run(installed.prism, "devices", "--json")
    assert listed.returncode == 0, listed.stdout + listed.stderr
    data = json.loads(listed.stdout)
    assert len(data) >= 24
    shown = installed.run(installed.python, "-m", "prism_core", "show", "nvidia.h100-sxm")
    assert shown.returncode == 0, shown.stdout + shown.stderr
    assert "architecture: hopper  # from nvidia.hopper" in shown.stdout
