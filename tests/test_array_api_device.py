"""``device=`` of the creation functions: where the standard's creation functions
put their arrays, through Prism's dispatch.

A ``device=`` naming Prism's description of an accelerator runs the call as
``prism_core.device(...)`` of it would (absent here: the error says how to simulate it; a
simulated instance plans there and runs on the reference backend); ``"cpu"`` and Prism's CPU
create in host memory; anything a backend cannot create on is a ``ValueError`` naming the op,
the device and what is accepted.
"""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import numpy as np
import pytest

import prism_core
from prism_core import array_api as xp
from prism_core.kernel.devices import get_device

CREATION = {
    "zeros": ((3,), {}),
    "ones": ((3,), {}),
    "full": ((3, 2.0), {}),
    "asarray": (([1.0, 2.0, 3.0],), {}),
}


def host_cpu() -> Any:
    return xp.__array_namespace_info__().default_device()


@pytest.mark.parametrize("name", sorted(CREATION))
@pytest.mark.parametrize("where", ["cpu", "host-instance", "host-description"])
def test_host_devices_create_numpy_arrays(name: str, where: str) -> None:
    device = {
        "cpu": "cpu",
        "host-instance": host_cpu(),
        "host-description": host_cpu().description,
    }[where]
    args, kwargs = CREATION[name]
    out = getattr(prism_core, name)(*args, **kwargs, device=device)
    assert isinstance(out, np.ndarray)
    np.testing.assert_array_equal(out, getattr(np, name)(*args, **kwargs))


@pytest.mark.parametrize("name", sorted(CREATION))
def test_an_absent_accelerator_is_named_with_the_way_to_simulate_it(name: str) -> None:
    args, kwargs = CREATION[name]
    with pytest.raises(prism_core.DeviceNotPresentError, match=r"nvidia\.h100-sxm.*simulate=True"):
        getattr(prism_core, name)(*args, **kwargs, device=get_device("nvidia.h100-sxm"))


def test_a_simulated_accelerator_plans_there_and_runs_on_the_reference(torch_plugin: Any) -> None:
    """A simulated instance (``PRISM_SIMULATE_DEVICES`` makes them) runs the call in a
    simulated scope of its device: the decision records the device, the reference computes."""
    from prism_core.hardware import DeviceInstance

    gpu = DeviceInstance(
        description=get_device("nvidia.h100-sxm"),
        index=0,
        name="simulated H100",
        uuid=None,
        memory_bytes=80 << 30,
        source="simulated",
        simulated=True,
        package=None,
        partition=None,
        driver=None,
    )
    from prism_core.kernel.dispatch.scope import current_scope

    op = prism_core.get_op("zeros")
    op._plans.clear()  # the plans cached by earlier calls: only this call's remain
    out = prism_core.zeros((2, 2), device=gpu)
    assert isinstance(out, np.ndarray)
    np.testing.assert_array_equal(out, np.zeros((2, 2)))
    with prism_core.device("nvidia.h100-sxm", simulate=True):
        simulated = current_scope()
        decision = prism_core.zeros.explain((2, 2))
    # The call was planned in the simulated scope of its device (its plan is cached under it) ...
    assert [key[0] for key in op._plans] == [simulated]
    # ... where a GPU variant is chosen and the reference computes.
    assert decision.simulated and decision.scope["device"] == "nvidia.h100-sxm"
    assert str(decision.chosen) == "torch.cuda.zeros"  # the torch plugin's GPU variant


@pytest.mark.parametrize("device", ["cuda", "gpu:0", 3])
def test_numpy_refuses_what_is_not_host_memory(device: Any) -> None:
    with pytest.raises(ValueError, match=r"zeros: device=.* takes None, 'cpu' or Prism's"):
        prism_core.zeros(3, device=device)


def test_torch_creates_on_the_device_named(torch_plugin: Any) -> None:
    torch = torch_plugin
    with prism_core.use_backend("torch"):
        on_host = prism_core.zeros(3, device=host_cpu())
        by_name = prism_core.ones(3, device="cpu")
        by_torch = prism_core.full(3, 1.5, device=torch.device("cpu"))
        converted = prism_core.asarray([1, 2], device="cpu")
        with pytest.raises(ValueError, match=r"device='nowhere' is not a device torch knows"):
            prism_core.zeros(3, device="nowhere")
    for out in (on_host, by_name, by_torch, converted):
        assert isinstance(out, torch.Tensor) and out.device.type == "cpu"


# -- the spellings users type: to_device() and device() ------------------------------------------


def host_spellings() -> list[Any]:
    """What users type for the host CPU: the standard's ``x.device`` of a NumPy array
    (``"cpu"``), and the libraries' own device objects (a jax device: in a process of its own,
    :func:`test_a_jax_device_is_the_host_cpu`)."""
    import array_api_strict
    import torch

    return [
        "cpu",
        np.arange(3.0).device,
        "cpu:0",
        torch.device("cpu"),
        array_api_strict.Device("CPU_DEVICE"),
    ]


#: A jax CPU device as a spelling, in a process of its own: jax, once its devices are listed,
#: warns at every later fork of the process that holds it (and this suite's workers fork).
JAX_SPELLING = """
import jax, numpy as np, prism_core
from prism_core.kernel.host import host_cpu_instance
cpu, host = jax.devices("cpu")[0], host_cpu_instance().description
x = np.arange(3.0)
np.testing.assert_array_equal(prism_core.to_device(x, cpu), x)
with prism_core.device(cpu) as scope:
    assert scope.device is host
    print(prism_core.explain("add", x, x).scope["device_asked"])
"""


def test_a_jax_device_is_the_host_cpu() -> None:
    pytest.importorskip("jax", reason="the jax device spelling needs jax (prism-plugin-jax)")
    done = subprocess.run(
        [sys.executable, "-c", JAX_SPELLING], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("CpuDevice(id=0): the host CPU (")


@pytest.mark.parametrize("spelling", host_spellings(), ids=repr)
def test_the_spellings_of_the_cpu_are_the_host_cpu(spelling: Any) -> None:
    x = np.arange(3.0)
    host = host_cpu().description
    out = prism_core.to_device(x, spelling)
    assert isinstance(out, np.ndarray)
    np.testing.assert_array_equal(out, x)
    with prism_core.device(spelling) as scope:
        assert scope.device is host
        decision = prism_core.explain("add", x, x)
    assert decision.scope["device"] == host.device_type
    assert decision.scope["device_asked"] == f"{spelling!r}: the host CPU ({host.device_type})"
    assert f"scope: device {spelling!r}: the host CPU ({host.device_type})," in str(decision)
    assert "device_asked" not in prism_core.current_scope().as_dict() or (
        prism_core.current_scope().as_dict()["device_asked"] is None
    )


def test_a_torch_tensor_goes_to_its_own_device(torch_plugin: Any) -> None:
    t = torch_plugin.arange(3.0)
    out = prism_core.to_device(t, t.device)
    assert isinstance(out, torch_plugin.Tensor) and out.device.type == "cpu"


@pytest.mark.parametrize("spelling", ["cuda", "cuda:0", "gpu", "gpu:1"])
def test_a_gpu_spelling_without_a_gpu_says_what_is_present_and_accepted(spelling: str) -> None:
    host = host_cpu().description.device_type
    for attempt in (
        lambda: prism_core.to_device(np.arange(3.0), spelling),
        lambda: prism_core.device(spelling),
    ):
        with pytest.raises(prism_core.DeviceNotPresentError) as info:
            attempt()
        message = str(info.value)
        assert message.startswith(f"device {spelling!r} means a GPU, and")
        assert f"present: {host}" in message
        assert "'cpu', 'cuda', 'cuda:N', 'gpu', 'gpu:N'" in message


def test_an_unknown_spelling_names_what_is_accepted() -> None:
    with pytest.raises(prism_core.hardware.UnknownDeviceError) as info:
        prism_core.to_device(np.arange(3.0), "cpux")
    assert "'cpu', 'cuda', 'cuda:N'" in str(info.value)
    with pytest.raises(TypeError, match="'cpu', 'cuda', 'cuda:N'"):
        prism_core.device(3)


def test_gpu_spellings_are_the_present_gpus(simgpu: None) -> None:
    """The simulated plugin reports one H100 PCIe: "cuda", "cuda:0" and "gpu" are it."""
    for spelling in ("cuda", "cuda:0", "gpu"):
        with prism_core.device(spelling) as scope:
            assert scope.device is not None
            assert scope.device.device_type == "nvidia.h100-pcie"
            asked = scope.as_dict()["device_asked"]
        assert asked.startswith(f"{spelling!r}: GPU 0, ")
        assert asked.endswith("(nvidia.h100-pcie)")
    with pytest.raises(prism_core.DeviceNotPresentError, match=r"'cuda:1' means GPU 1.*1 GPU"):
        prism_core.device("cuda:1")
