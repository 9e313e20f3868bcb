"""The plugin as Prism sees it: its ops' example arguments (``prism bench genomics.align``,
``prism.tune``), its command (``prism genomics``, an entry point of ``prism.commands``), what a
first call imports of it, the order in which plugins that extend its ops load, and what
``prism_core.genomics`` says now that the ops live here."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from prism_genomics import ops

import prism_core
from prism_core._tuning import tuner

pytestmark = pytest.mark.timeout(300)


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``args`` in a fresh interpreter of this environment (this test's plugin settings)."""
    done = subprocess.run(
        list(args),
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=280,
        check=False,
    )
    assert "Traceback" not in done.stdout + done.stderr, done.stderr
    return done


# -- the ops' example arguments -----------------------------------------------------------------


@pytest.mark.parametrize(("op", "batch"), [(ops.SW_ALIGN, None), (ops.SW_ALIGN_BATCH, 3)])
def test_the_examples_are_the_ops_arguments_and_their_bytes(op: str, batch: int | None) -> None:
    assert prism_core.get_op(op).examples is not None
    args = tuner.example_arguments(op, 6, "float32", batch=batch)  # the dtype is not used
    arrays = [a for a in args if isinstance(a, np.ndarray)]
    assert tuner.example_bytes(op, 6, batch=batch) == sum(a.nbytes for a in arrays)
    assert args[0].dtype == np.uint8 and args[0].shape == (6,)
    assert args[1].shape == ((60,) if batch is None else (6 * batch,))  # 10 n, or batch x n
    result = prism_core.get_op(op).function(*args)  # they are a call the op takes
    assert result is not None


def test_the_batch_examples_default_to_their_batch() -> None:
    _, targets, offsets, *_ = tuner.example_arguments(ops.SW_ALIGN_BATCH, 10)
    assert len(offsets) == ops.BATCH + 1 and len(targets) == 10 * ops.BATCH
    with pytest.raises(prism_core.tuning.TuningError, match="batch: expected a positive number"):
        tuner.example_arguments(ops.SW_ALIGN_BATCH, 10, batch=0)


def test_tune_by_size_and_the_sizes_error_name_the_examples() -> None:
    report = prism_core.tuning.tune(ops.SW_ALIGN, sizes=[20], dtypes=["float32", "float64"],
                             budget_s=2, record=False, progress=False)  # fmt: skip
    assert [c.shapes for c in report.cases] == [((20,), (200,), (5, 5))]  # one case: fixed types
    with pytest.raises(prism_core.tuning.TuningError) as info:
        prism_core.tuning.tune("linalg.det", sizes=[4], record=False)
    assert "genomics.sw_align, genomics.sw_align_batch" in str(info.value)


def test_bench_with_the_reference_alone_says_what_to_install(tmp_path: Path) -> None:
    """Only this plugin's references align here: the rows time Prism against them instead of
    showing dashes, and a note names the plugins to install (the ops' examples say which)."""
    env = {"PRISM_CACHE_DIR": str(tmp_path)}
    command = [sys.executable, "-m", "prism_core", "bench", "genomics.align", "--no-store"]
    text = run(*command, "--budget", "120", env=env)
    assert text.returncode == 0, text.stderr
    assert "note: one variant only can run here for genomics.sw_align " in text.stdout
    assert "install prism-plugin-parasail" in text.stdout
    assert re.search(r"^genomics\.sw_align_batch +dna +100 x 64 ", text.stdout, re.M)
    done = run(*command, "--budget", "120", "--json", env=env)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["notes"] and "prism-plugin-numba" in data["notes"][0]
    assert [(r["op"], r["n"], r.get("batch")) for r in data["rows"]] == [
        ("genomics.sw_align", 100, None),
        ("genomics.sw_align", 1000, None),
        ("genomics.sw_align_batch", 100, 64),
        ("genomics.sw_align_batch", 1000, 64),
    ]
    for row in data["rows"]:
        assert row["dtype"] == "dna"
        assert row["oracle"] == row["prism_picks"] == f"numpy.{row['op']}"
        assert row["prism_s"] and row["oracle_s"], row
        n, batch = row["n"], row["batch"]
        assert row["cells"] == n * (10 * n if batch is None else n * batch)  # cell updates
        assert row["note"] == f"numpy.{row['op']} is the only variant that can run here"


# -- the command, through prism's own entry point group -----------------------------------------


def test_prism_genomics_is_the_plugins_command(tmp_path: Path) -> None:
    """``prism`` (the console script) finds the command through the entry point this
    distribution installs, lists it, and runs it."""
    script = Path(sys.executable).with_name("prism")
    if not script.exists():
        pytest.skip(f"no console script at {script} (installed without scripts)")
    listed = run(str(script), "--help")
    assert listed.returncode == 0, listed.stderr
    assert "genomics" in listed.stdout and "sequence alignment" in listed.stdout
    (tmp_path / "q.fa").write_text(">q\nACGTACGT\n")
    (tmp_path / "t.fa").write_text(">t\nTTACGTACGTTT\n")
    done = run(str(script), "genomics", "align", str(tmp_path / "q.fa"), str(tmp_path / "t.fa"))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[1].split() == ["q", "t", "16", "7", "9"]
    help_ = run(str(script), "genomics", "align", "--help")
    assert "--traceback" in help_.stdout


# -- what a first call imports, and what prism_core says now ------------------------------------

#: A first call in a fresh process; what of the plugin it imported.
FIRST_CALL = """
import json, sys
import numpy as np
import prism_core
a = np.ones((4, 4))
assert (prism_core.matmul(a, a) == a @ a).all()
print(json.dumps(sorted(m for m in sys.modules if "genomics" in m.lower())))
"""


def test_import_prism_core_and_a_first_matmul_import_no_genomics_code(tmp_path: Path) -> None:
    """Where the plugin is not loaded (autoload off: the core's own tests run so), nothing of
    it is imported; where every installed plugin is loaded, discovery imports its entry point
    and the ops' declarations only: no reference, no results, no readers, no command."""
    alone = {"PRISM_CACHE_DIR": str(tmp_path), "PRISM_PLUGINS": ""}
    done = run(sys.executable, "-c", FIRST_CALL, env=alone)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []
    every = {k: v for k, v in os.environ.items() if not k.startswith("PRISM_")}
    every["PRISM_CACHE_DIR"] = str(tmp_path)
    done = subprocess.run(
        [sys.executable, "-c", FIRST_CALL], env=every, capture_output=True, text=True,
        timeout=280, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    # (The torch plugin's list of its GPU variant, prism_plugin_torch.genomics, imports no torch.)
    ours = [m for m in json.loads(done.stdout) if m.startswith("prism_genomics")]
    assert ours == ["prism_genomics", "prism_genomics.ops", "prism_genomics.plugin"]


def test_prism_core_genomics_says_where_it_went() -> None:
    with pytest.raises(AttributeError) as info:
        prism_core.genomics  # noqa: B018
    assert "pip install prism-plugin-genomics" in str(info.value)
    assert "import prism_genomics" in str(info.value)
    assert "genomics" not in prism_core.__all__


# -- plugins that extend the ops load in any order ----------------------------------------------

#: A plugin named to load before ``genomics`` (plugins load by name) whose variant extends
#: ``genomics.sw_align``; it imports the ops' declarations first, as parasail, numba and torch do.
EXTENDING = """
import prism_core

def shout(*args):
    raise RuntimeError("never run")

@prism_core.extending.hookimpl
def prism_variants():
    import prism_genomics.ops  # declares the ops if the genomics plugin has not loaded yet

    return [prism_core.extending.Variant("genomics.sw_align", shout, backend="numpy", priority=-5,
                               name="aaa.sw_align")]
"""


@pytest.mark.parametrize("plugins", ["aaa,genomics", "aaa"])
def test_a_plugin_extending_the_ops_loads_before_the_genomics_plugin(
    tmp_path: Path, plugins: str
) -> None:
    site = tmp_path / "site"
    info = site / "prism_plugin_aaa-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: prism-plugin-aaa\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[prism.plugins]\naaa = aaa_plugin\n")
    (site / "aaa_plugin.py").write_text(textwrap.dedent(EXTENDING))
    code = (
        "import prism_core\n"
        "ps = prism_core.extending.plugins()\n"
        "print(sorted(n for n, r in ps.records.items() if r.status == 'loaded'))\n"
        "print(sorted(v.name for v in prism_core.get_op('genomics.sw_align').variants))\n"
    )
    path = os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")]))
    done = run(sys.executable, "-c", code, env={"PYTHONPATH": path, "PRISM_PLUGINS": plugins})
    assert done.returncode == 0, done.stderr  # strict: a failed plugin would raise
    loaded, variants = done.stdout.splitlines()
    assert "'aaa'" in loaded
    expected = (
        ["aaa.sw_align", "numpy.genomics.sw_align"] if "genomics" in plugins else ["aaa.sw_align"]
    )
    assert variants == repr(expected)
