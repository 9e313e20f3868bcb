"""A backend's capability methods (``can_drive``, ``dtypes``, ``settings``) are plugin code,
isolated as plugin loading is: what one raises is recorded on its plugin's record (once per
method), shown by ``prism plugins`` and ``prism doctor``, and that backend's variants are
skipped with a reason naming the plugin and the method; every other backend's calls run.

The plugins are real (tests/broken_capabilities_plugin.py: namespace backends over
``array_api_compat.numpy``), found through real entry points."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import warnings
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import prism_core as prism
from prism_core.extending import PluginError, PluginSettings, PluginWarning

from .conftest import REPO, put_distribution_on_path

pytest.importorskip("array_api_compat", reason="the test plugins' namespace")

ENTRY_POINTS = (
    "[prism.plugins]\n"
    "hostile = tests.broken_capabilities_plugin\n"
    "lacking = tests.broken_capabilities_plugin:Lacking\n"
)
OURS = ("hostile", "lacking")
DTYPES = "backend 'baddtypes': dtypes() raised RuntimeError: the dtype table is not loaded"
DRIVE = "backend 'baddrive': can_drive() raised KeyError: "
SETTINGS = "backend 'badsettings': settings() raised OSError: cannot read the settings file"


def _others() -> tuple[str, ...]:
    from prism_core.kernel.distributions import entry_points

    return tuple(ep.name for ep in entry_points("prism.plugins") if ep.name not in OURS)


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    put_distribution_on_path(
        monkeypatch, tmp_path / "site", "prism-test-hostile", "1.0", ENTRY_POINTS
    )
    yield tmp_path / "site"
    prism.extending.reload_plugins()


def _discover(name: str = "hostile", strict: bool = False) -> prism.extending.PluginSet:
    """Our plugin ``name`` alone, by autoload (not asked for by name, strict if ``strict``)."""
    block = (*_others(), *(n for n in OURS if n != name))
    ps = prism.extending.reload_plugins(PluginSettings(strict=strict, block=block))
    assert ps.records[name].status == "loaded", ps.records[name].reason
    return ps


def _reasons(decision: prism.Decision, variant: str) -> str:
    return "; ".join(next(c for c in decision.candidates if c.variant == variant).reasons)


def test_raising_capability_methods_skip_their_backend_and_every_other_call_runs(
    site: Path,
) -> None:
    ps = _discover()
    x = np.arange(1.0, 7.0).reshape(2, 3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", PluginWarning)
        product = prism.multiply(x, x)
        s = prism.linalg.svd(x, full_matrices=False).S
        decision = prism.explain(prism.multiply, x, x)
    np.testing.assert_array_equal(product, x * x)
    np.testing.assert_allclose(s, np.linalg.svd(x, compute_uv=False))
    assert decision.chosen_backend == "numpy"
    for variant, words in (
        ("baddtypes.multiply", DTYPES),
        ("baddrive.multiply", DRIVE),
        ("badsettings.multiply", SETTINGS),
    ):
        reasons = _reasons(decision, variant)
        assert "plugin hostile (prism-test-hostile 1.0)" in reasons, reasons
        assert words in reasons, reasons
    # Recorded once per plugin and method, however many calls asked; warned once each.
    problems = ps.records["hostile"].problems
    texts = [str(w.message) for w in caught if w.category is PluginWarning]
    for words in (DTYPES, DRIVE, SETTINGS):
        assert sum(p.startswith(words) for p in problems) == 1, problems
        assert sum(words in t for t in texts) == 1, texts
    assert ps.records["hostile"].status == "loaded"


def test_raising_settings_are_recorded_and_the_fingerprint_says_unknown(site: Path) -> None:
    from prism_core._tuning.tuning_records import host_fingerprint

    ps = _discover()
    with pytest.warns(PluginWarning, match="settings"):
        components = host_fingerprint().components
    assert components["setting.badsettings"] == "unknown (OSError)"
    assert [p for p in ps.records["hostile"].problems if p.startswith(SETTINGS)] == [SETTINGS]


def test_strict_mode_makes_a_raising_capability_method_an_error(site: Path) -> None:
    _discover(strict=True)
    x = np.arange(4.0)
    with pytest.raises(PluginError, match=r"plugin hostile \(prism-test-hostile 1\.0\)") as info:
        prism.multiply(x, x)
    said = str(info.value)
    assert "raised" in said and "strict mode is on (PRISM_STRICT_PLUGINS)" in said, said
    assert "must return" in said and "never raise" in said, said
    assert type(info.value.__cause__) in (RuntimeError, KeyError, OSError)


@pytest.mark.timeout(120)
def test_threads_racing_record_each_failure_once(site: Path) -> None:
    ps = _discover()
    x = np.arange(1.0, 5.0)
    errors: list[BaseException] = []
    start = threading.Barrier(8)

    def work(op: str) -> None:
        try:
            start.wait()
            getattr(prism, op)(x, x)
        except BaseException as exc:  # reported below
            errors.append(exc)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PluginWarning)
        threads = [
            threading.Thread(target=work, args=(op,))
            for op in ("add", "subtract", "multiply", "divide") * 2
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert errors == []
    problems = ps.records["hostile"].problems
    for words in (DTYPES, DRIVE, SETTINGS):
        assert sum(p.startswith(words) for p in problems) == 1, problems


def _prism(site: Path, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``prism *args`` in a fresh process that finds our plugins by autoload (the installed
    ones blocked, so that only these and the builtins load)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PRISM_")}
    env |= {
        "PYTHONPATH": os.pathsep.join([str(site), str(REPO)]),
        "PRISM_CACHE_DIR": str(tmp_path / "cache"),
        "PRISM_BLOCK_PLUGINS": ",".join((*_others(), "lacking")),
    }
    return subprocess.run(
        [sys.executable, "-m", "prism_core", *args],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120, check=False,
    )  # fmt: skip


@pytest.mark.timeout(300)
def test_the_commands_name_the_plugin_and_method(site: Path, tmp_path: Path) -> None:
    listed = _prism(site, tmp_path, "plugins")
    assert listed.returncode == 1, listed.stdout + listed.stderr
    for words in (DTYPES, DRIVE, SETTINGS):
        problem = f"problem: hostile (prism-test-hostile 1.0): {words}"
        assert problem in listed.stdout, listed.stdout
    doctor = _prism(site, tmp_path, "doctor", "--json")
    assert doctor.returncode == 0, doctor.stderr
    records = {r["name"]: r for r in json.loads(doctor.stdout)["plugins"]["plugins"]}
    problems = records["hostile"]["problems"]
    for words in (DTYPES, DRIVE, SETTINGS):
        assert any(p.startswith(words) for p in problems), problems
    explained = _prism(site, tmp_path, "explain", "multiply", "--shape", "3,3")
    assert explained.returncode == 0, explained.stdout + explained.stderr
    assert "chosen: numpy.multiply" in explained.stdout, explained.stdout
    line = next(t for t in explained.stdout.splitlines() if "baddtypes.multiply" in t)
    assert "plugin hostile (prism-test-hostile 1.0)" in line, line
    assert "dtypes() raised RuntimeError" in line, line


def test_explain_rejects_the_variant_of_a_function_the_namespace_lacks(site: Path) -> None:
    _discover("lacking")
    x = np.arange(4.0)
    decision = prism.explain(prism.sqrt, x)
    assert prism.explain(prism.multiply, x, x).chosen == "nosqrt.multiply"
    assert decision.chosen == "numpy.sqrt", str(decision)
    reasons = _reasons(decision, "nosqrt.sqrt")
    assert "tests.nosqrt_namespace has no sqrt" in reasons, reasons
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a fallback would warn
        np.testing.assert_array_equal(prism.sqrt(x), np.sqrt(x))
    assert not [r for r in prism.fallbacks() if r.variant == "nosqrt.sqrt"]


def test_explain_says_a_backend_holds_no_dtype(site: Path) -> None:
    _discover("lacking")
    x = np.arange(4.0)
    decision = prism.explain(prism.multiply, x, x)
    reasons = _reasons(decision, "holdsnothing.multiply")
    assert "(it holds no dtype)" in reasons, reasons
    assert "(it holds )" not in str(decision)
