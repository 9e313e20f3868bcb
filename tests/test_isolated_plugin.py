"""``prism_core.testing.isolated_plugin``: the conftest the bundled plugins' suites use, run
for real on throwaway test directories in a pytest subprocess each."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

#: A guard against a hung process, not a performance expectation.
HANG_GUARD_S = 180


def _run_suite(tmp_path: Path, name: str, module: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "conftest.py").write_text(
        "from prism_core.testing import isolated_plugin\n"
        f"only_this_plugin, pytest_pycollect_makemodule = isolated_plugin({name!r}, {module!r})\n"
    )
    (tmp_path / "test_alone.py").write_text(
        textwrap.dedent(
            f"""
            import os

            import prism_core
            from prism_core.kernel.plugins import BUILTIN_PLUGINS

            def test_only_this_plugin_is_loaded():
                assert os.environ["PRISM_PLUGINS"] == {name!r}
                assert os.environ["PRISM_STRICT_PLUGINS"] == "1"
                records = prism_core.extending.plugins().records
                loaded = {{n for n, r in records.items() if r.status == "loaded"}}
                assert {name!r} in loaded
                assert loaded - {{{name!r}}} <= set(BUILTIN_PLUGINS)
            """
        )
    )
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=HANG_GUARD_S,
        cwd=tmp_path,
    )


@pytest.mark.timeout(HANG_GUARD_S)
def test_the_installed_plugin_alone(tmp_path: Path) -> None:
    pytest.importorskip("prism_plugin_scipy", reason="prism-plugin-scipy is the plugin tested")
    done = _run_suite(tmp_path, "scipy", "prism_plugin_scipy.plugin")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout


@pytest.mark.timeout(HANG_GUARD_S)
@pytest.mark.parametrize(
    ("name", "module", "why"),
    [
        ("nothere", "prism_plugin_nothere.plugin", "no entry point 'nothere' in the group"),
        ("scipy", "elsewhere.plugin", "names 'prism_plugin_scipy.plugin', not this plugin"),
    ],
)
def test_a_missing_plugin_is_one_failing_test_saying_how_to_install_it(
    tmp_path: Path, name: str, module: str, why: str
) -> None:
    if name == "scipy":
        pytest.importorskip("prism_plugin_scipy", reason="the entry point compared with")
    done = _run_suite(tmp_path, name, module)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "1 failed" in done.stdout
    assert f"prism-plugin-{name}-is-installed" in done.stdout
    assert why in done.stdout
    assert f"pip install -e plugins/prism-plugin-{name}" in done.stdout
