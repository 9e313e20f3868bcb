"""`prism doctor`: a complete report, in text and JSON, whatever is missing or broken."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import prism_core


def run_doctor(tmp_path: Path, *args: str, prelude: str = "") -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PRISM_")}
    env["PRISM_CACHE_DIR"] = str(tmp_path / "cache")
    env["PRISM_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # the builtins only, whatever else is installed
    code = (
        f"import sys; {prelude}\n"
        "from prism_core._cli import main\n"
        f"sys.exit(main(['doctor', *{list(args)!r}]))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path
    )
    assert "Traceback" not in proc.stdout + proc.stderr
    return proc


def test_doctor_json_has_every_section(tmp_path: Path) -> None:
    proc = run_doctor(tmp_path, "--json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    for key in (
        "prism",
        "python",
        "packages",
        "yaml",
        "environment",
        "host",
        "library",
        "plugins",
        "devices",
        "caches",
    ):
        assert key in report, key
    assert report["environment"] == {
        "PRISM_CACHE_DIR": str(tmp_path / "cache"),
        "PRISM_DISABLE_PLUGIN_AUTOLOAD": "1",
    }
    host = report["host"]
    assert host["cpu"]["family"] and host["cpu"]["features"]
    assert host["match"]["device_type"].startswith(("generic.", "amd.", "intel.", "aws."))
    assert host["blas"] and host["blas"][0]["num_threads"] >= 1
    present = report["devices"]["present"]
    assert present[0]["device_type"] == host["match"]["device_type"]
    assert present[0]["source"] == "archspec"
    names = {p["name"]: p for p in report["plugins"]["plugins"]}
    assert names["numpy"]["status"] == "loaded"
    assert report["plugins"]["backends"]["numpy"]["available"] is True
    # Counted as `prism devices` counts: devices, and the families (abstract) apart.
    every = prism_core.hardware.devices(include_abstract=True)
    assert report["library"]["devices"] == len(prism_core.hardware.devices()) >= 24
    assert report["library"]["families"] == len([d for d in every if d.abstract]) >= 10
    # What the backends say about their runtime (Backend.capabilities()).
    capabilities = report["plugins"]["backends"]["numpy"]["capabilities"]
    assert capabilities["numpy"] == np.__version__
    assert capabilities["blas"] == host["blas"]


def test_doctor_shows_the_tuning_cache(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PRISM_")}
    env["PRISM_CACHE_DIR"] = str(tmp_path / "cache")
    env["PRISM_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    # The builtin backend alone gives each op one candidate, and one candidate is not tuned:
    # a user op with two variants is (really measured, and stored in the cache directory).
    code = (
        "import numpy as np, prism_core as prism\n"
        "@prism.operation(name='doctor_op', array_args=(0,))\n"
        "def op(x): return x * 2\n"
        "@op.variant(priority=5, name='doctor_op.other')\n"
        "def other(x): return x * 2\n"
        "prism.tune(op, np.ones(64), budget_s=2)\n"
    )
    tune = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path
    )
    assert tune.returncode == 0, tune.stderr
    proc = run_doctor(tmp_path, "--json")
    assert proc.returncode == 0, proc.stderr
    tuning = json.loads(proc.stdout)["caches"]["tuning"]
    assert Path(tuning["file"]).is_file()
    assert Path(tuning["file"]).parent == tmp_path / "cache" / "tuning"
    assert (tuning["ops"], tuning["entries"]) == (["doctor_op"], 1)
    text = run_doctor(tmp_path).stdout
    assert "tuning:" in text and tuning["file"] in text


def test_doctor_text(tmp_path: Path) -> None:
    proc = run_doctor(tmp_path)
    assert proc.returncode == 0, proc.stderr
    for heading in (
        "Prism ",
        "Python:",
        "Host:",
        "Devices present:",
        "Plugins and backends:",
        "Environment variables in effect:",
        "Caches:",
    ):
        assert heading in proc.stdout
    families = len([d for d in prism_core.hardware.devices(include_abstract=True) if d.abstract])
    assert (
        f"\n  devices: {len(prism_core.hardware.devices())}\n  families: {families}\n"
        in proc.stdout
    )
    numpy_section = proc.stdout.split("\n    numpy:\n", 1)[1]
    assert "\n      capabilities:\n        numpy: " in numpy_section


@pytest.mark.parametrize(
    "missing", [["archspec"], ["threadpoolctl"], ["archspec", "threadpoolctl", "platformdirs"]]
)
def test_doctor_with_optional_dependencies_missing(tmp_path: Path, missing: list[str]) -> None:
    # Setting sys.modules[name] = None makes `import name` raise ImportError, as if uninstalled.
    prelude = "; ".join(f"sys.modules[{m!r}] = None" for m in missing)
    proc = run_doctor(tmp_path, "--json", prelude=prelude)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["devices"]["present"], "the host CPU is still mapped to a description"
    if "archspec" in missing:
        assert report["host"]["cpu"]["source"] == "platform"
        assert "archspec" in report["host"]["cpu"]["note"]
    if "threadpoolctl" in missing:
        assert report["host"]["blas"] == []


CAPABILITY_PLUGIN = """
import prism_core


class Crashing(prism_core.extending.Backend):
    name = "crashing"

    def availability(self):
        return prism_core.extending.Availability(True, version="1.0")

    def capabilities(self):
        raise RuntimeError("driver crashed")

    def asarray(self, obj, dtype=None):
        return obj

    def to_numpy(self, array):
        return array


class Absent(Crashing):
    name = "absent"

    def availability(self):
        return prism_core.extending.Availability(False, "not on this host")

    def capabilities(self):
        raise AssertionError("capabilities() of an unavailable backend must not be called")


class Talking(Crashing):
    name = "talking"

    def capabilities(self):
        return {"framework": "talkative 2.0", "devices": ["T1", "T2"]}


@prism_core.extending.hookimpl
def prism_backends():
    return [Crashing(), Absent(), Talking()]
"""


def test_doctor_shows_backend_capabilities_in_isolation(tmp_path: Path) -> None:
    site = tmp_path / "site"
    (site / "prism_plugin_caps-1.0.dist-info").mkdir(parents=True)
    (site / "caps_plugin.py").write_text(CAPABILITY_PLUGIN, encoding="utf-8")
    (site / "prism_plugin_caps-1.0.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: prism-plugin-caps\nVersion: 1.0\n", encoding="utf-8"
    )
    (site / "prism_plugin_caps-1.0.dist-info" / "entry_points.txt").write_text(
        "[prism.plugins]\ncaps = caps_plugin\n", encoding="utf-8"
    )
    prelude = f"sys.path.insert(0, {str(site)!r}); import os; os.environ['PRISM_PLUGINS'] = 'caps'"
    proc = run_doctor(tmp_path, "--json", prelude=prelude)
    assert proc.returncode == 0, proc.stderr
    backends = json.loads(proc.stdout)["plugins"]["backends"]
    assert backends["talking"]["capabilities"] == {
        "framework": "talkative 2.0",
        "devices": ["T1", "T2"],
    }
    assert backends["crashing"]["capabilities"] == {"error": "RuntimeError: driver crashed"}
    assert backends["crashing"]["available"] is True
    assert backends["absent"] == {
        "available": False,
        "reason": "not on this host",
        "version": None,
        "priority": 0,
    }
