"""prism_core.distributed without a cluster: what a worker advertises, and routing by it.

The descriptions are real: ``describe_worker`` runs this process's detection (the host CPU) and
simulates the devices it is asked to, from the shipped library, as a Dask worker does when the
plugin is set up.  Routing is matched against them as the client matches the descriptions it
reads from workers (tests/test_distributed.py does that with a real cluster).
"""

from __future__ import annotations

import json
import pickle
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("distributed", reason="prism_core.distributed needs the distributed extra")

import prism_core as prism
from prism_core import PrismError
from prism_core.distributed import (
    RESOURCE_PREFIX,
    ClusterView,
    NoWorkerError,
    PrismCall,
    PrismWorkerPlugin,
    TaskResult,
    WorkerDescription,
    WorkerScope,
)
from prism_core.distributed.advert import CAPABILITY_HELD, describe_worker
from prism_core.distributed.routing import route
from prism_core.extending import Variant
from prism_core.kernel.dispatch.registry import Op

pytestmark = pytest.mark.timeout(60)

CPU = "tcp://10.0.0.1:4000"
GPU = "tcp://10.0.0.2:4000"


def described(address: str, name: str, simulate: tuple[str, ...] = ()) -> WorkerDescription:
    """A worker's description as the client gets it: as plain data, through JSON."""
    data = describe_worker(address, name, simulate).as_dict()
    return WorkerDescription.from_dict(json.loads(json.dumps(data)))


@pytest.fixture
def view() -> ClusterView:
    return ClusterView(
        scheduler="tcp://10.0.0.9:8786",
        workers={
            CPU: described(CPU, "cpu-worker"),
            GPU: described(GPU, "gpu-worker", ("nvidia.h100-pcie",)),
        },
    )


def test_a_worker_describes_its_present_and_simulated_devices_and_their_resources() -> None:
    host = prism.hardware.present_devices().devices[0].device_type
    desc = describe_worker(GPU, "gpu-worker", ["nvidia.h100-pcie", "nvidia.h100-pcie"])
    assert [(d.device_type, d.count, d.simulated) for d in desc.devices] == [
        (host, 1, False),
        ("nvidia.h100-pcie", 2, True),
    ]
    assert dict(desc.resources) == {
        f"{RESOURCE_PREFIX}{host}": 1,
        f"{RESOURCE_PREFIX}cpu": 1,
        f"{RESOURCE_PREFIX}nvidia.h100-pcie": 2,
        f"{RESOURCE_PREFIX}gpu": 2,
        desc.capability: CAPABILITY_HELD,
    }
    # What it can do, named alike for a worker with the same devices and backends (one its
    # nanny restarted), and differently for any other.
    again = describe_worker("tcp://elsewhere:1", "other-name", ["nvidia.h100-pcie"] * 2)
    assert again.capability == desc.capability
    assert describe_worker(GPU, "gpu-worker", ["nvidia.h100-pcie"]).capability != desc.capability
    assert "numpy" in desc.backends and dict(desc.backends["numpy"])
    assert desc.summary() == f"{host}, nvidia.h100-pcie x2 (simulated)"
    assert (
        desc.devices[1].memory_bytes == prism.hardware.get_device("nvidia.h100-pcie").memory_bytes
    )


def test_the_description_survives_the_wire_with_what_requirements_match() -> None:
    sent = describe_worker(GPU, "gpu-worker", ["nvidia.h100-pcie"])
    got = WorkerDescription.from_dict(json.loads(json.dumps(sent.as_dict())))
    assert got.as_dict() == sent.as_dict()
    gpu = got.devices[-1].description
    assert "advertised by worker" in gpu.origin
    # The worker's resolved description, lineage included: ancestry and features match.
    assert gpu.is_a("nvidia.hopper")
    requirement = {"vendor": "nvidia", "ancestry": "nvidia.hopper", "tensor_cores": ">=4"}
    assert gpu.satisfies(requirement).ok
    assert (
        gpu.satisfies(requirement).met
        == prism.hardware.get_device("nvidia.h100-pcie").satisfies(requirement).met
    )


def test_another_format_is_refused_with_both_versions() -> None:
    data = describe_worker(CPU, "w").as_dict()
    data["format"] = 99
    with pytest.raises(PrismError, match=r"format 99 .*this client reads format 1"):
        WorkerDescription.from_dict(data)


def test_an_unknown_simulated_device_is_a_note_from_the_environment_an_error_when_named() -> None:
    desc = describe_worker(CPU, "w", ["nvidia.h100-pcei"])
    assert not desc.simulated
    assert any("nvidia.h100-pcei" in n and "nvidia.h100-pcie" in n for n in desc.notes)
    with pytest.raises(PrismError, match=r"simulate: .*'nvidia.h100-pcei'.*did you mean"):
        describe_worker(CPU, "w", ["nvidia.h100-pcei"], strict=True)
    with pytest.raises(PrismError, match="is a family"):
        describe_worker(CPU, "w", ["nvidia.hopper"], strict=True)


@pytest.mark.parametrize(
    ("simulate", "message"),
    [
        ("nvidia.h100-pcie", "simulate must be a list of device types"),
        ([3], "holds 3, which is not a device type"),
        ({"gpu-0": "nvidia.h100-pcie"}, r"simulate\['gpu-0'\] must be a list"),
    ],
)
def test_the_plugin_checks_its_simulate_argument(simulate: object, message: str) -> None:
    with pytest.raises(TypeError, match=message):
        PrismWorkerPlugin(simulate)  # type: ignore[arg-type]


def test_the_plain_plugin_is_idempotent_one_with_options_replaces() -> None:
    assert PrismWorkerPlugin().idempotent
    assert not PrismWorkerPlugin(["nvidia.h100-pcie"]).idempotent


def test_a_requirement_routes_to_the_workers_with_a_device_that_meets_it(
    view: ClusterView,
) -> None:
    found = route(view, prism.hardware.Requirement({"vendor": "nvidia", "tensor_cores": ">=4"}))
    assert found.ok and found.workers == (GPU,)
    assert found.accepted[GPU] == WorkerScope("nvidia.h100-pcie", simulated=True)
    assert found.uniform == WorkerScope("nvidia.h100-pcie", simulated=True)
    (reason,) = found.rejected[CPU]
    assert "vendor is 'generic', required 'nvidia'" in reason
    assert "tensor_cores" in reason  # every unmet clause, as dispatch says it
    text = str(found)
    assert f"+ {GPU} (gpu-worker): under device nvidia.h100-pcie (simulated)" in text
    assert f"- {CPU} (cpu-worker):" in text


def test_a_cpu_requirement_goes_anywhere_under_each_workers_cpu(view: ClusterView) -> None:
    host = prism.hardware.present_devices().devices[0].device_type
    found = route(view, prism.hardware.Requirement({"kind": "cpu"}))
    assert found.workers == (CPU, GPU)
    assert set(found.accepted.values()) == {WorkerScope(host, simulated=False)}
    assert not found.everywhere  # a requirement is always placed under its device


def test_no_qualifying_worker_gives_every_workers_reasons(view: ClusterView) -> None:
    found = route(view, prism.hardware.Requirement({"vendor": "amd"}))
    assert not found.ok
    error = NoWorkerError(found)
    text = str(error)
    assert "none of the 2 workers of the cluster at tcp://10.0.0.9:8786 qualifies" in text
    assert f"- {CPU} (cpu-worker): " in text and f"- {GPU} (gpu-worker): " in text
    assert "nvidia.h100-pcie (simulated): vendor is 'nvidia', required 'amd'" in text
    assert "Dask would wait for such a worker forever" in text
    assert isinstance(error, LookupError) and error.route is found
    # It travels pickled (raised in a task that submits tasks) with its route and message.
    again = pickle.loads(pickle.dumps(error))
    assert str(again) == text and again.route == found


def test_a_cluster_without_workers_says_so() -> None:
    found = route(
        ClusterView(scheduler="tcp://10.0.0.9:8786"), prism.hardware.Requirement({"kind": "cpu"})
    )
    assert "has no workers" in str(NoWorkerError(found))


def test_workers_that_did_not_advertise_are_listed_with_why(view: ClusterView) -> None:
    late = "tcp://10.0.0.3:4000"
    view = ClusterView(
        scheduler=view.scheduler,
        workers=view.workers,
        problems={late: "has not advertised: Prism's worker plugin is not set up there (yet)"},
        pending=frozenset({late}),
    )
    found = route(view, prism.hardware.Requirement({"vendor": "amd"}))
    assert found.rejected[late] == (
        "has not advertised: Prism's worker plugin is not set up there (yet)",
    )


def test_an_op_routes_where_one_of_its_variants_can_run(view: ClusterView) -> None:
    found = route(view, None, prism.get_op("matmul"))
    assert found.everywhere  # the NumPy variant runs on every worker's CPU: a plain task
    gpu_only = Op("dist_test.gpu_only")
    gpu_only.variants.append(
        Variant("dist_test.gpu_only", np.matmul, backend="simgpu", requires={"vendor": "nvidia"})
    )
    found = route(view, None, gpu_only)
    assert not found.ok
    for reasons in found.rejected.values():
        assert any("backend 'simgpu' is not installed there" in r for r in reasons)
    # A simulated device is only for tasks whose requirement names it.
    assert any("simulated: considered only" in r for r in found.rejected[GPU])


def test_an_op_with_a_requirement_runs_on_a_simulated_device_only_with_a_reference(
    view: ClusterView,
) -> None:
    nvidia = prism.hardware.Requirement({"vendor": "nvidia"})
    found = route(view, nvidia, prism.get_op("matmul"))
    assert found.accepted == {GPU: WorkerScope("nvidia.h100-pcie", simulated=True)}
    gpu_only = Op("dist_test.gpu_only_2")
    gpu_only.variants.append(
        Variant("dist_test.gpu_only_2", np.matmul, backend="simgpu", requires={"vendor": "nvidia"})
    )
    found = route(view, nvidia, gpu_only)
    assert "has none" in " ".join(found.rejected[GPU])


def test_the_task_wrapper_runs_under_its_placement_and_reports() -> None:
    call = PrismCall(
        None, op="matmul", placement=WorkerScope("nvidia.h100-pcie", True), report=True
    )
    a = np.arange(4.0).reshape(2, 2)
    result = call(a, a)  # outside a worker: no worker address
    assert isinstance(result, TaskResult)
    np.testing.assert_array_equal(result.value, a @ a)
    assert (result.device, result.simulated, result.variant) == (
        "nvidia.h100-pcie",
        True,
        "numpy.matmul",
    )
    scope = PrismCall(prism.current_scope, placement=WorkerScope("nvidia.h100-pcie", True))()
    assert scope.device.device_type == "nvidia.h100-pcie" and scope.simulated
    assert prism.current_scope().device is None  # the block ended with the call


def test_the_task_wrapper_tokenizes_as_its_function_and_placement() -> None:
    from dask.tokenize import tokenize

    def double(x: int) -> int:
        return 2 * x

    on_gpu = WorkerScope("nvidia.h100-pcie", True)
    assert tokenize(PrismCall(double, placement=on_gpu)) == tokenize(
        PrismCall(double, placement=on_gpu)
    )
    assert tokenize(PrismCall(double, placement=on_gpu)) != tokenize(PrismCall(double))
    assert PrismCall(double).__name__ == "double"  # Dask names the task after it
    with pytest.raises(TypeError, match="exactly one of fn and op"):
        PrismCall(double, op="matmul")


def test_import_prism_core_never_imports_dask() -> None:
    code = (
        "import sys, prism_core; prism_core.hardware.devices(); prism_core.matmul; "
        "print([m for m in ('dask', 'distributed') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_prism_distributed_is_a_lazy_submodule() -> None:
    import prism_core.distributed

    assert prism.distributed is prism_core.distributed
    assert "distributed" not in prism.__all__  # `import *` must not import Dask


def test_without_dask_the_import_error_says_what_to_install() -> None:
    # Dask is installed here; a None entry in sys.modules makes `import distributed` fail as it
    # does where the extra is missing.
    code = (
        "import sys; sys.modules['distributed'] = None\n"
        "import prism_core\n"
        "try:\n    prism_core.distributed\n"
        "except ImportError as exc:\n    print(exc)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "pip install 'prism-core[distributed]'" in out.stdout
