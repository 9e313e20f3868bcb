"""What the torch plugin's tests share (a module of its own: ``conftest`` is a name every test
directory has)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping

__all__ = ["ENV", "INSTALL", "REMOVED", "builtin_ops", "run_python", "subprocess_env"]

INSTALL = (
    "the torch plugin is not installed: install it before testing it "
    "(pip install torch==2.13.0, then pip install -e plugins/prism-plugin-torch)"
)
#: The plugin settings of every test (and of the subprocesses they start).
ENV: Mapping[str, str] = {
    "PRISM_PLUGINS": "torch,genomics",  # the alignment op of genomics.py is the latter's
    "PRISM_DISABLE_PLUGIN_AUTOLOAD": "1",
    "PRISM_STRICT_PLUGINS": "1",
}
#: Settings no test may inherit from the caller's environment.
REMOVED = ("PRISM_HARDWARE_PATH", "PRISM_BLOCK_PLUGINS", "PRISM_NO_CACHE")


def subprocess_env(**extra: str) -> dict[str, str]:
    """The environment of this test (its plugin settings and cache) for a child process."""
    env = {k: v for k, v in os.environ.items() if k not in REMOVED}
    env.update(extra)
    return env


def run_python(code: str, *, timeout: float = 120, **env: str) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a fresh interpreter of this environment; fails the test with its output
    when it exits with an error."""
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=subprocess_env(**env),
        check=False,
    )
    assert proc.returncode == 0, f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    return proc


def builtin_ops() -> set[str]:
    """The ops of Prism's catalogue (those with the builtin NumPy reference), not the ops other
    tests of the same process declared."""
    import prism_core

    return {
        name
        for name, op in prism_core.all_ops().items()
        if any(v.reference and v.source == "plugin:numpy" for v in op.variants)
    }
