"""A backend's lifecycle: ``Backend.shutdown`` runs once at interpreter exit for each backend of
the plugins in use (a failing one is said on stderr and stops neither the exit nor the others),
and ``Backend.synchronize`` is handed the results Prism is about to time or move.  A real
plugin, found through its entry point, in a fresh interpreter."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(120)

PLUGIN = '''
import os
from types import MappingProxyType
import numpy as np
import prism_core

LOG = os.environ["LIFECYCLE_LOG"]


def note(text):
    with open(LOG, "a", encoding="utf-8") as f:
        f.write(text + "\\n")


class Recorder(prism_core.extending.Backend):
    name = "recorder"
    drives = MappingProxyType({"kind": "cpu"})

    def availability(self):
        return prism_core.extending.Availability(True, version="1")

    def asarray(self, obj, dtype=None):
        return np.asarray(obj, dtype=dtype)

    def to_numpy(self, array):
        return np.asarray(array)

    def synchronize(self, *arrays):
        shapes = (type(a).__name__ + str(getattr(a, "shape", "")) for a in arrays)
        note("synchronize " + " ".join(shapes))

    def shutdown(self):
        note("shutdown recorder")


class Broken(Recorder):
    name = "broken"

    def shutdown(self):
        raise RuntimeError("the device went away")


def add(x1, x2):
    return np.add(x1, x2)


@prism_core.extending.hookimpl
def prism_backends():
    return [Recorder(), Broken()]


@prism_core.extending.hookimpl
def prism_variants():
    return [prism_core.extending.Variant(op="add", fn=add, backend="recorder", name="recorder.add")]
'''

RUN = """
import numpy as np
import prism_core
import prism_core.kernel.dispatch.ops  # installs the op functions
from prism_core._tuning.candidates import candidates

a = np.ones(3)
runners = {r.variant: r for r in candidates("add", (a, a)).runners}
runners["recorder.add"].run()
print("done")
"""


def test_shutdown_at_exit_and_synchronize_on_the_results(tmp_path: Path) -> None:
    site = tmp_path / "site"
    info = site / "prism_lifecycle-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: prism-lifecycle\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[prism.plugins]\nlifecycle = lifecycle_plugin\n")
    (site / "lifecycle_plugin.py").write_text(textwrap.dedent(PLUGIN))
    log = tmp_path / "log"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PRISM_")}
    env.update(
        PYTHONPATH=os.pathsep.join([str(site), *filter(None, [env.get("PYTHONPATH")])]),
        PRISM_PLUGINS="lifecycle",
        PRISM_DISABLE_PLUGIN_AUTOLOAD="1",
        PRISM_CACHE_DIR=str(tmp_path / "cache"),
        LIFECYCLE_LOG=str(log),
    )
    proc = subprocess.run(
        [sys.executable, "-c", RUN], env=env, capture_output=True, text=True, timeout=100
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "done"
    assert log.read_text().splitlines() == ["synchronize ndarray(3,)", "shutdown recorder"]
    assert "prism: backend 'broken' failed to shut down: RuntimeError: the device went away" in (
        proc.stderr
    )
    assert "Traceback" not in proc.stderr
