"""Arguments of the public API are checked where they are given, with a message that names the
argument, the value given and what would be accepted."""

from __future__ import annotations

import re
from typing import Any

import pytest

import prism_core as prism
from prism_core import ArraySpec
from prism_core.hardware import RequirementError, get_device


@pytest.fixture(scope="module")
def h100() -> Any:
    return get_device("nvidia.h100-sxm")


# -- scopes: checked when the function is called, not when the block is entered ---------------


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (
            lambda: prism.device(None),
            TypeError,
            r"device\(\): name must be a device type .*got None",
        ),
        (
            lambda: prism.device(["x"]),
            TypeError,
            r"device\(\): name must be .*got \['x'\] \(list\)",
        ),
        (
            lambda: prism.device("nvidia.h100-sxm", simulate="yes"),
            TypeError,
            r"device\(\): simulate must be True or False, got 'yes' \(str\)",
        ),
        (
            lambda: prism.use_backend(None),
            TypeError,
            r"use_backend\(\): name must be a backend name .* got None",
        ),
        (
            lambda: prism.choosing(prefer=5),
            TypeError,
            r"choosing\(\): prefer must be one of 'performance', 'reference' .* got 5 \(int\)",
        ),
        (
            lambda: prism.choosing(prefer="referenc"),
            ValueError,
            r"prefer='referenc' is not a policy \(did you mean 'reference'\?\)",
        ),
        (
            lambda: prism.choosing(strict="no"),
            TypeError,
            r"choosing\(\): strict must be True or False .* got 'no' \(str\)",
        ),
        (
            lambda: prism.choosing(strict=1),
            TypeError,
            r"choosing\(\): strict must be True or False .* got 1 \(int\)",
        ),
    ],
)
def test_scope_arguments_are_checked_when_called(call: Any, error: Any, message: str) -> None:
    # No `with`: users write `s = prism.device(None)` and expect the error on that line.
    with pytest.raises(error, match=message):
        call()


def test_named_devices_and_backends_are_resolved_when_called() -> None:
    with pytest.raises(prism.hardware.UnknownDeviceError, match=r"did you mean 'nvidia\.h100-sxm'"):
        prism.device("nvidia.h100-sx")
    with pytest.raises(prism.DeviceNotPresentError, match="simulate=True"):
        prism.device("nvidia.h100-sxm")
    with pytest.raises(prism.extending.PluginError, match="did you mean 'numpy'"):
        prism.use_backend("numpi")


def test_strict_is_a_real_bool_and_false_turns_it_off() -> None:
    base = prism.current_scope()
    with prism.choosing(strict=True):
        assert prism.current_scope().strict is True
        with prism.choosing(strict=False):
            assert prism.current_scope().strict is False
    assert prism.current_scope() is base


def test_a_scope_object_made_outside_the_block_layers_on_the_scope_in_force() -> None:
    numpy_only = prism.use_backend("numpy")
    with prism.device("nvidia.h100-sxm", simulate=True):
        with numpy_only as scope:
            assert scope.backend == "numpy"
            assert scope.device is not None and scope.device.device_type == "nvidia.h100-sxm"
    # ... and can be used again.
    with numpy_only as scope:
        assert scope.device is None and scope.backend == "numpy"
    assert prism.current_scope().backend is None


def test_set_backend_checks_its_argument() -> None:
    with pytest.raises(
        TypeError,
        match=r"set_backend\(\): name must be a backend name such as 'numpy', or None for "
        r"automatic selection; got 5 \(int\)",
    ):
        prism.set_backend(5)  # type: ignore[arg-type]
    assert prism.current_scope().backend is None
    prism.set_backend(None)  # None is valid: automatic selection
    assert prism.current_scope().backend is None


def test_get_device_checks_its_argument() -> None:
    for bad in (None, 3, ["nvidia.h100-sxm"]):
        with pytest.raises(TypeError, match=r"device_type must be a device type string"):
            get_device(bad)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"got None \(NoneType\)"):
        get_device(None)  # type: ignore[arg-type]


# -- ArraySpec --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("shape", "message"),
    [
        ("2x2", r"shape must be a sequence of non-negative integers .* got '2x2' \(str\)"),
        ("22", r"got '22' \(str\)"),
        (b"22", r"got b'22' \(bytes\)"),
        (4, r"got 4 \(int\)"),
        (None, r"got None"),
        ((2, -1), r"dimension 1 is -1"),
        ((2.5, 2), r"dimension 0 is 2.5 \(float\)"),
        ((2, 2.0), r"dimension 1 is 2.0 \(float\)"),
        ((True, 2), r"dimension 0 is True \(bool\)"),
        (["2", 2], r"dimension 0 is '2' \(str\)"),
    ],
)
def test_arrayspec_shapes_are_sequences_of_non_negative_ints(shape: Any, message: str) -> None:
    with pytest.raises(TypeError if "dimension 1 is -1" not in message else ValueError) as info:
        ArraySpec(shape)
    assert re.search(message, str(info.value)), str(info.value)
    assert "ArraySpec" in str(info.value)


def test_arrayspec_accepts_integer_like_dimensions() -> None:
    np = pytest.importorskip("numpy")
    assert ArraySpec([np.int64(3), 0]).shape == (3, 0)
    assert ArraySpec(()).shape == ()
    assert ArraySpec(range(3)).shape == (0, 1, 2)
    assert type(ArraySpec([np.int64(3)]).shape[0]) is int


# -- requirements and has_feature: one meaning, one implementation -----------------------------


def test_satisfies_needs_a_mapping(h100: Any) -> None:
    with pytest.raises(
        RequirementError, match=r"a requirement is a mapping of clause to value.*got \['vendor'\]"
    ):
        h100.satisfies(["vendor"])
    with pytest.raises(RequirementError, match=r"got 'vendor' \(str\)"):
        prism.hardware.Requirement("vendor")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ([">=1"], r"'>=1' is a version specifier; a list means equal to one of its strings"),
        ("", r"an empty string is not a requirement value"),
        ("  ", r"an empty string is not a requirement value"),
        ({}, r"is not accepted"),
        ([], r"is not accepted"),
    ],
)
def test_has_feature_checks_the_version_spec(h100: Any, spec: Any, message: str) -> None:
    with pytest.raises(RequirementError, match=message) as info:
        h100.has_feature("tensor_cores", spec)
    assert "has_feature" in str(info.value) and "version_spec" in str(info.value)
    # The requirement path refuses the same values with the same reason.
    with pytest.raises(RequirementError, match=message):
        h100.satisfies({"tensor_cores": spec})


def test_has_feature_checks_the_name(h100: Any) -> None:
    with pytest.raises(TypeError, match=r"has_feature\(\): name must be a feature name .*None"):
        h100.has_feature(None)
    with pytest.raises(RequirementError, match=r"'Tensor Cores' is not a feature or attribute"):
        h100.has_feature("Tensor Cores")


def test_has_feature_and_satisfies_agree_on_strings(h100: Any) -> None:
    # "4": a string that is not a specifier means "equal to it", in both paths (the version 4
    # reads as "4"); "==4" is the way to compare as versions.
    assert h100.has_feature("tensor_cores", "4") is True
    assert h100.satisfies({"tensor_cores": "4"}).ok is True
    assert h100.has_feature("tensor_cores", "3") is False
    assert h100.satisfies({"feature:tensor_cores": "3"}).ok is False
    assert h100.has_feature("tensor_cores", ["3", "4"]) is True
    assert h100.has_feature("tensor_cores", "==4.0") is True
    assert h100.feature("tensor_cores").version_satisfies("4") is True
    with pytest.raises(RequirementError, match="an empty string"):
        h100.feature("tensor_cores").version_satisfies("")


SPECS: list[Any] = [
    None,
    True,
    False,
    0,
    1,
    3,
    4,
    5,
    3.5,
    "1",
    "4",
    "9.0",
    "==1",
    ">=1",
    ">=4",
    "<2",
    ">=2,<4",
    "!=1",
    ["1", "4"],
]


def test_has_feature_is_the_feature_clause_of_a_requirement() -> None:
    names = ["tensor_cores", "tma", "amx", "avx512", "sve", "matrix_cores", "no_such_feature"]
    for dev in prism.hardware.devices(include_abstract=True):
        for name in [*names, *dev.features]:
            for spec in SPECS:
                clause = True if spec is None else spec
                expected = dev.satisfies({f"feature:{name}": clause}).ok
                assert dev.has_feature(name, spec) is expected, (dev, name, spec)
                feat = dev.feature(name)
                if feat is not None:
                    assert feat.version_satisfies(clause) is expected, (dev, name, spec)
