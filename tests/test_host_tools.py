"""prism_core.host_tools: running a vendor's tool, and reusing its answer for a few seconds, so
that the plugins asking one tool in one detection (the torch, CuPy and Numba plugins all ask
``nvidia-smi``) run it once.  Real subprocesses of stand-in tools (tests/stand_ins.py)."""

from __future__ import annotations

import os
import shlex
from pathlib import Path

import pytest

from prism_core import host_tools, nvidia_smi
from prism_core.hardware import DeviceLibrary
from tests.stand_ins import stand_in

pytestmark = [
    pytest.mark.timeout(60),
    pytest.mark.skipif(os.name != "posix", reason="the stand-in tools are POSIX shell scripts"),
]

SMI_LINE = "0, NVIDIA H100 80GB HBM3, GPU-1, 81559, 550.54.15"


def counting_smi(directory: Path, runs: Path, line: str = SMI_LINE) -> Path:
    """An ``nvidia-smi`` that prints ``line`` for the query (and nothing for ``-L``) and
    appends a line to ``runs`` each time it runs."""
    note = f"echo run >> {shlex.quote(str(runs))}; "
    stand_in(
        directory,
        "nvidia-smi",
        {
            nvidia_smi.NVIDIA_SMI_COMMAND: f"{note}echo {shlex.quote(line)}",
            nvidia_smi.NVIDIA_SMI_LIST_COMMAND: f"{note}echo",
        },
    )
    return directory / "nvidia-smi"


def test_several_plugins_asking_one_tool_run_it_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs = tmp_path / "runs"
    tools = tmp_path / "bin"
    counting_smi(tools, runs)
    monkeypatch.setenv("PATH", str(tools))
    library = DeviceLibrary()
    found = [nvidia_smi.detect(library) for _ in range(3)]  # as the three plugins ask
    assert [d.device_type for d in found[0].devices] == ["nvidia.h100-sxm"]
    assert found[0] == found[1] == found[2]
    # The query once, and the MIG listing once (an H100 can be split).
    assert runs.read_text().splitlines() == ["run", "run"]


def test_a_changed_tool_or_environment_is_asked_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs = tmp_path / "runs"
    tools = tmp_path / "bin"
    smi = str(counting_smi(tools, runs))
    monkeypatch.setenv("PATH", str(tools))
    query = nvidia_smi.NVIDIA_SMI_COMMAND[1:]
    first = host_tools.run_tool(smi, query, name="nvidia-smi")
    assert host_tools.run_tool(smi, query, name="nvidia-smi") == first
    assert len(runs.read_text().splitlines()) == 1
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "1")  # another environment: asked again
    host_tools.run_tool(smi, query, name="nvidia-smi")
    assert len(runs.read_text().splitlines()) == 2
    counting_smi(tools, runs, line="0, NVIDIA H200, GPU-2, 143771, 550.54.15")  # a new tool
    again, why = host_tools.run_tool(smi, query, name="nvidia-smi")
    assert why == "" and again is not None and "H200" in again
    assert len(runs.read_text().splitlines()) == 3


def test_an_answer_is_reused_only_for_a_while(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs = tmp_path / "runs"
    smi = str(counting_smi(tmp_path / "bin", runs))
    monkeypatch.setattr(host_tools, "REUSE_S", 0.0)
    query = nvidia_smi.NVIDIA_SMI_COMMAND[1:]
    host_tools.run_tool(smi, query, name="nvidia-smi")
    host_tools.run_tool(smi, query, name="nvidia-smi")
    assert len(runs.read_text().splitlines()) == 2


def test_a_failure_is_reused_too(tmp_path: Path) -> None:
    """A tool that fails (or hangs: its whole timeout) is run once, not once per plugin."""
    runs = tmp_path / "runs"
    stand_in(
        tmp_path / "bin", "slow-smi", otherwise=f"echo run >> {shlex.quote(str(runs))}; exit 3"
    )
    tool = str(tmp_path / "bin" / "slow-smi")
    first = host_tools.run_tool(tool, ["-q"], name="slow-smi")
    assert first == (None, "slow-smi failed with exit status 3")
    assert host_tools.run_tool(tool, ["-q"], name="slow-smi") == first
    assert runs.read_text().splitlines() == ["run"]
