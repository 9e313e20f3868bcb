"""docs/detection-samples.md is what ``prism doctor`` prints today for each recorded vendor-tool
output (docs/gen_detection_samples.py runs the real CLI over stand-in tools), and what it shows
maps each sample to the device types it should: a wrong mapping fails here by name, not only as
a stale page."""

from __future__ import annotations

import importlib.metadata
import re
import subprocess
import sys
from collections import Counter

import pytest

from .conftest import REPO

PAGE = REPO / "docs" / "detection-samples.md"
POSIX_ONLY = pytest.mark.skipif(sys.platform == "win32", reason="the stand-ins are shell scripts")


def _torch_plugin_installed() -> bool:
    try:
        importlib.metadata.distribution("prism-plugin-torch")
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


def present(title: str) -> Counter[str]:
    """The device types (and how many of each) the page's ``text`` block under the heading
    ``### title`` shows as present."""
    text = PAGE.read_text(encoding="utf-8")
    heading = f"\n### {title}\n"
    assert heading in text, f"docs/detection-samples.md has no sample {title!r}"
    section = text.split(heading, 1)[1].split("\n### ", 1)[0]
    block = section.split("```text\n", 1)[1].split("```", 1)[0]
    return Counter(re.findall(r"^    - device_type: (\S+)$", block, flags=re.M))


def none_found(title: str) -> str:
    text = PAGE.read_text(encoding="utf-8")
    section = text.split(f"\n### {title}\n", 1)[1].split("\n### ", 1)[0]
    return section.split("none_found:", 1)[1].split("```", 1)[0]


@POSIX_ONLY
@pytest.mark.skipif(not _torch_plugin_installed(), reason="the page is made with the torch plugin")
@pytest.mark.timeout(600)
def test_the_page_is_current() -> None:
    done = subprocess.run(
        [sys.executable, str(REPO / "docs" / "gen_detection_samples.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=540,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_amd_samples() -> None:
    assert present("AMD Instinct MI300X x8 in SPX/NPS1, amd-smi") == {"amd.mi300x": 8}
    assert present("AMD Instinct MI300X x8 in CPX/NPS4, amd-smi") == {"amd.mi300x-xcd": 64}
    assert present("AMD Instinct MI300X x8 in CPX/NPS1, rocm-smi") == {"amd.mi300x-xcd": 64}
    assert present("AMD Instinct MI250X x4 (8 GCDs), rocm-smi") == {"amd.mi250x-gcd": 8}
    assert present("amd-smi killed mid-output") == {}
    assert "amd-smi printed no JSON list of GPUs" in none_found("amd-smi killed mid-output")


def test_intel_samples() -> None:
    flat = present("Intel Data Center GPU Max 1550 x2, xpu-smi, FLAT")
    assert flat == {"intel.max-1550-stack": 4}
    composite = present("Intel Data Center GPU Max 1550 x2, xpu-smi, COMPOSITE")
    assert composite == {"intel.max-1550": 2}
    assert present("Intel Data Center GPU Max 1100 x2, xpu-smi") == {"intel.max-1100": 2}
    assert present("Intel Data Center GPU Max 1550, sycl-ls, FLAT") == {"intel.max-1550-stack": 2}
    assert present("Intel Data Center GPU Max 1550, sycl-ls, COMPOSITE") == {"intel.max-1550": 1}
    assert present("sycl-ls with a CPU device only") == {}


def test_apple_samples() -> None:
    assert present("Apple M4 Max") == {"apple.m4-max-gpu": 1}
    assert present("Apple M3 Max") == {"apple.m3-max-gpu": 1}
    assert present("Intel Mac with an Intel and an AMD GPU") == {}
    assert "no Apple GPU here" in none_found("Intel Mac with an Intel and an AMD GPU")


def test_ascend_samples() -> None:
    assert present("Huawei Atlas 800T A2, 8 Ascend 910B3") == {"huawei.ascend-910b": 8}
