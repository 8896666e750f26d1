"""The error tree: message shapes and the hierarchy other layers rely on."""

from dra_operator import errors


def test_invalid_object_error_names_source_and_path() -> None:
    err = errors.InvalidObjectError("spec.devices.requests[0].name", "required").at("a.yaml")
    assert str(err) == "a.yaml: spec.devices.requests[0].name: required"
    assert err.path == "spec.devices.requests[0].name"


def test_cost_limit_is_a_runtime_error() -> None:
    assert issubclass(errors.CELCostLimitError, errors.CELRuntimeError)
    assert issubclass(errors.CELRuntimeError, errors.DRAOperatorError)


def test_api_errors_carry_status() -> None:
    err = errors.APIConflictError(409, "Conflict", "the object has been modified")
    assert err.status == 409
    assert str(err) == "409 Conflict: the object has been modified"
