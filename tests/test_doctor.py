"""`prism doctor`: a complete report, in text and JSON, whatever is missing or broken."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest


def run_doctor(tmp_path: Path, *args: str, prelude: str = "") -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PRISM_")}
    env["PRISM_CACHE_DIR"] = str(tmp_path / "cache")
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
    assert report["environment"] == {"PRISM_CACHE_DIR": str(tmp_path / "cache")}
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
    assert report["library"]["devices"] >= 44


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
