"""Regenerate docs/detection-samples.md: what ``prism doctor`` shows under "Devices present" for
each recorded output of a vendor's tool in tests/data/host_tools.

Usage: python docs/gen_detection_samples.py [--check]

For each sample host, stand-in tools (tests/stand_ins.py) that print the recorded files are
written to a temporary directory, which is all of ``PATH``; the real CLI then runs in a
subprocess (``python -m prism_core doctor``, with ``PRISM_PLUGINS=torch``: the torch plugin's
``prism_detect_devices`` asks every detection module) and the page keeps its "Devices present"
section.  The generated part sits between ``<!-- samples:start -->`` and
``<!-- samples:end -->``.  With ``--check`` nothing is written; the exit status is 1 when the
page is out of date (tests/test_detection_samples.py runs this check).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from _generated import between, regenerate  # docs/_generated.py, beside this script

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # for tests/stand_ins.py

from prism_core.amd_smi import (  # noqa: E402
    AMD_SMI_LIST_COMMAND,
    AMD_SMI_STATIC_COMMAND,
    ROCM_SMI_COMMAND,
)
from prism_core.apple_silicon import SYSCTL_COMMAND, SYSTEM_PROFILER_COMMAND  # noqa: E402
from prism_core.intel_xpu import HIERARCHY_VARIABLE, SYCL_LS_COMMAND, XPU_SMI_COMMAND  # noqa: E402
from prism_core.npu_smi import NPU_SMI_COMMAND  # noqa: E402
from tests.stand_ins import CAT, printing  # noqa: E402

DOC = Path(__file__).resolve().parent / "detection-samples.md"
START, END = "<!-- samples:start -->", "<!-- samples:end -->"
DATA = REPO / "tests" / "data" / "host_tools"
#: A guard against a hung doctor, not a performance expectation (a tool's own timeout is 10 s).
DOCTOR_TIMEOUT_S = 120

#: ``prism doctor``, as ``python -m prism_core`` runs it.
DOCTOR = ("-m", "prism_core", "doctor")
#: The same on a Linux host made to look like macOS: ``apple_silicon`` detects only where its
#: ``PLATFORM`` is darwin, and looks for sysctl in ``/usr/sbin`` too (``SYSTEM_DIRS``), which a
#: Linux host has; both are set in the process before the CLI's entry function runs.
DOCTOR_AS_MACOS = (
    "-c",
    "import prism_core.apple_silicon as a; a.PLATFORM = 'darwin'; a.SYSTEM_DIRS = (); "
    "from prism_core._cli import main; raise SystemExit(main(['doctor']))",
)


@dataclass(frozen=True)
class Host:
    """One sample host: the recorded file each tool prints for its command (files of
    tests/data/host_tools/``folder``), and the environment variables set on the host."""

    title: str
    folder: str
    files: tuple[tuple[tuple[str, ...], str], ...]
    env: tuple[tuple[str, str], ...] = ()
    note: str = ""

    @property
    def macos(self) -> bool:
        return self.folder == "apple"


def _amd_smi(mode: str) -> tuple[tuple[tuple[str, ...], str], ...]:
    return (
        (AMD_SMI_STATIC_COMMAND, f"amd-smi-static-mi300x-{mode}.json"),
        (AMD_SMI_LIST_COMMAND, f"amd-smi-list-mi300x-{mode}.json"),
    )


def _mac(name: str) -> tuple[tuple[tuple[str, ...], str], ...]:
    return (
        (SYSCTL_COMMAND, f"sysctl-{name}.txt"),
        (SYSTEM_PROFILER_COMMAND, f"system_profiler-{name}.json"),
    )


COMPOSITE = ((HIERARCHY_VARIABLE, "COMPOSITE"),)

HOSTS = (
    Host("AMD Instinct MI300X x8 in SPX/NPS1, amd-smi", "amd", _amd_smi("spx")),
    Host("AMD Instinct MI300X x8 in CPX/NPS4, amd-smi", "amd", _amd_smi("cpx")),
    Host(
        "AMD Instinct MI300X x8 in SPX/NPS1, rocm-smi",
        "amd",
        ((ROCM_SMI_COMMAND, "rocm-smi-mi300x-spx.json"),),
    ),
    Host(
        "AMD Instinct MI300X x8 in CPX/NPS1, rocm-smi",
        "amd",
        ((ROCM_SMI_COMMAND, "rocm-smi-mi300x-cpx.json"),),
        note="rocm-smi of ROCm 6.3/6.4 shows each partition with the whole package's memory.",
    ),
    Host(
        "AMD Instinct MI250X x4 (8 GCDs), rocm-smi",
        "amd",
        ((ROCM_SMI_COMMAND, "rocm-smi-mi250x.json"),),
    ),
    Host(
        "HPE Cray MI250X named after its board, rocm-smi",
        "amd",
        ((ROCM_SMI_COMMAND, "rocm-smi-mi250x-hpe.json"),),
        note="The recording answered `rocm-smi --showproductname --json`; the stand-in prints it "
        "for the full command detection runs.",
    ),
    Host(
        "amd-smi killed mid-output",
        "amd",
        (
            (AMD_SMI_STATIC_COMMAND, "garbage-truncated.txt"),
            (AMD_SMI_LIST_COMMAND, "garbage-truncated.txt"),
        ),
    ),
    Host(
        "Intel Data Center GPU Max 1550 x2, xpu-smi, FLAT",
        "intel",
        ((XPU_SMI_COMMAND, "xpu-smi-discovery-max1550.json"),),
    ),
    Host(
        "Intel Data Center GPU Max 1550 x2, xpu-smi, COMPOSITE",
        "intel",
        ((XPU_SMI_COMMAND, "xpu-smi-discovery-max1550.json"),),
        COMPOSITE,
    ),
    Host(
        "Intel Data Center GPU Max 1100 x2, xpu-smi",
        "intel",
        ((XPU_SMI_COMMAND, "xpu-smi-discovery-max1100.json"),),
    ),
    Host(
        "xpu-smi of a driver without product names",
        "intel",
        ((XPU_SMI_COMMAND, "xpu-smi-discovery-generic-name.json"),),
    ),
    Host("xpu-smi finding no GPU", "intel", ((XPU_SMI_COMMAND, "xpu-smi-no-device.txt"),)),
    Host(
        "Intel Data Center GPU Max 1550, sycl-ls, FLAT",
        "intel",
        ((SYCL_LS_COMMAND, "sycl-ls-flat-max1550.txt"),),
    ),
    Host(
        "Intel Data Center GPU Max 1550, sycl-ls, COMPOSITE",
        "intel",
        ((SYCL_LS_COMMAND, "sycl-ls-composite-max1550.txt"),),
        COMPOSITE,
    ),
    Host(
        "Intel Data Center GPU Max 1550 x2, sycl-ls, FLAT",
        "intel",
        ((SYCL_LS_COMMAND, "sycl-ls-flat-two-cards.txt"),),
    ),
    Host(
        "Intel Data Center GPU Max 1550 x3, sycl-ls, COMPOSITE",
        "intel",
        ((SYCL_LS_COMMAND, "sycl-ls-composite-three-cards.txt"),),
        COMPOSITE,
    ),
    Host(
        "The same three cards read as FLAT",
        "intel",
        ((SYCL_LS_COMMAND, "sycl-ls-composite-three-cards.txt"),),
        note=f"The recording was made in COMPOSITE mode; here `{HIERARCHY_VARIABLE}` is unset.",
    ),
    Host("sycl-ls with a CPU device only", "intel", ((SYCL_LS_COMMAND, "sycl-ls-no-gpu.txt"),)),
    Host(
        "Intel Arc A770 seen through OpenCL only, sycl-ls",
        "intel",
        ((SYCL_LS_COMMAND, "sycl-ls-arc-a770-opencl-only.txt"),),
    ),
    Host("Apple M4 Max", "apple", _mac("m4-max")),
    Host("Apple M3 Max", "apple", _mac("m3-max")),
    Host(
        "Intel Mac with an Intel and an AMD GPU",
        "apple",
        (
            (SYSCTL_COMMAND, "sysctl-intel-mac.txt"),
            (SYSTEM_PROFILER_COMMAND, "system_profiler-intel-mac.json"),
        ),
    ),
    Host(
        "system_profiler printing text, no sysctl",
        "apple",
        ((SYSTEM_PROFILER_COMMAND, "system_profiler-text.txt"),),
        note="The stand-in prints the text report for the `-json` command; there is no sysctl.",
    ),
    Host(
        "Huawei Atlas 800T A2, 8 Ascend 910B3",
        "ascend",
        ((NPU_SMI_COMMAND, "npu-smi-info-910b3.txt"),),
    ),
    Host(
        "Huawei Atlas A3 (two chips per NPU)", "ascend", ((NPU_SMI_COMMAND, "npu-smi-info-a3.txt"),)
    ),
)


def _section(output: str) -> list[str]:
    """The "Devices present" section of doctor's ``output``, up to the next top-level heading,
    without the host CPU (archspec reads it from the machine running this script)."""
    lines = output.splitlines()
    try:
        start = lines.index("Devices present:")
    except ValueError:
        raise RuntimeError(
            f"prism doctor printed no 'Devices present:' section:\n{output}"
        ) from None
    end = next((i for i in range(start + 1, len(lines)) if re.match(r"\S", lines[i])), len(lines))
    kept: list[str] = []
    item: list[str] = []
    for line in [*lines[start:end], ""]:
        if item and not line.startswith("      "):  # the end of one "    - " item of present
            if not any(row.strip() == "source: archspec" for row in item):
                kept += item
            item = []
        if line.startswith("    - "):
            item = [line]
        elif item:
            item.append(line)
        elif line:
            kept.append(line)
    return kept


def doctor(host: Host) -> str:
    """The "Devices present" section ``prism doctor`` prints on ``host``, temporary paths
    replaced by what they are."""
    with tempfile.TemporaryDirectory(prefix="prism-detection-sample-") as tmp:
        bin_dir = printing(
            Path(tmp) / "bin",
            {command: DATA / host.folder / name for command, name in host.files},
        )
        env = {
            "PATH": str(bin_dir),  # the stand-ins name cat by its path: nothing else is needed
            "HOME": tmp,
            "PRISM_CACHE_DIR": str(Path(tmp) / "cache"),
            "PRISM_PLUGINS": "torch",
            "LC_ALL": "C.UTF-8",
            **dict(host.env),
        }
        if "SYSTEMROOT" in os.environ:  # Windows cannot start Python without it
            env["SYSTEMROOT"] = os.environ["SYSTEMROOT"]
        args = DOCTOR_AS_MACOS if host.macos else DOCTOR
        done = subprocess.run(
            [sys.executable, *args],
            env=env,
            cwd=tmp,
            capture_output=True,
            text=True,
            timeout=DOCTOR_TIMEOUT_S,
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(
                f"prism doctor failed on the sample host {host.title!r} with exit status "
                f"{done.returncode}:\n{done.stderr}"
            )
        text = "\n".join(_section(done.stdout))
        for path, name in ((str(bin_dir), "<stand-ins>"), (tmp, "<tmp>"), (str(DATA), "<samples>")):
            text = text.replace(path, name)
        return text.replace(CAT, "cat")


def _command(host: Host) -> str:
    env = " ".join(f"{k}={v}" for k, v in (*host.env, ("PRISM_PLUGINS", "torch")))
    if host.macos:
        return f'$ PATH=<stand-ins> {env} python -c "{DOCTOR_AS_MACOS[1]}"'
    return f"$ PATH=<stand-ins> {env} python -m prism_core doctor"


def _summary(section: str) -> str:
    """One line: how many devices of each type are present, or that none is."""
    counts: dict[str, int] = {}
    for found in re.findall(r"^    - device_type: (\S+)$", section, flags=re.M):
        counts[found] = counts.get(found, 0) + 1
    if not counts:
        return "Present: none (the reason is under `none_found`)."
    return "Present: " + ", ".join(f"{n} x `{kind}`" for kind, n in counts.items()) + "."


def render(sections: Sequence[str]) -> str:
    parts = [START, ""]
    vendor = ""
    names = {"amd": "AMD", "intel": "Intel", "apple": "Apple", "ascend": "Huawei Ascend"}
    for host, section in zip(HOSTS, sections, strict=True):
        if host.folder != vendor:
            vendor = host.folder
            parts += [f"## {names[vendor]}", ""]
        parts += [f"### {host.title}", ""]
        for command, name in host.files:
            link = f"../tests/data/host_tools/{host.folder}/{name}"
            parts.append(f"- `{' '.join(command)}` prints [`{name}`]({link})")
        if host.note:
            parts += ["", host.note]
        parts += ["", "```console", _command(host), "```", "", _summary(section), ""]
        parts += ["```text", section, "```", ""]
    parts.append(END)
    return "\n".join(parts)


def run_all() -> list[str]:
    """Every host's section, in the order of :data:`HOSTS` (run side by side: each is a
    Python process that spends most of its time importing)."""
    with ThreadPoolExecutor(max_workers=min(8, (os.cpu_count() or 1) * 2)) as pool:
        return list(pool.map(doctor, HOSTS))


def updated(text: str) -> str:
    return between(text, START, END, render(run_all()))


def main() -> int:
    return regenerate(DOC, updated, "gen_detection_samples.py")


if __name__ == "__main__":
    raise SystemExit(main())
