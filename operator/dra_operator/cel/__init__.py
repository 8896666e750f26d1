"""The DRA CEL environment: parse with cel-python's grammar, type-check, compile to Python.

`compile_selector` turns a device selector into a `CompiledSelector` whose `matches` runs the
generated Python on a `DeviceView` (built once per device by `device_view`). Semantics,
functions and error texts are those of Kubernetes' DRA CEL environment.
"""

from dra_operator.cel._cache import ResultCache
from dra_operator.cel._derived import CompiledDerived, compile_derived
from dra_operator.cel._device import DeviceView, device_view
from dra_operator.cel._named import NamedView, named_view
from dra_operator.cel._parser import warm_up
from dra_operator.cel._selector import (
    DEFAULT_FEATURES,
    MAX_EXPRESSION_LENGTH,
    CELFeatures,
    CompiledSelector,
    SelectorCache,
    compile_selector,
)

__all__ = [
    "DEFAULT_FEATURES",
    "MAX_EXPRESSION_LENGTH",
    "CELFeatures",
    "CompiledDerived",
    "CompiledSelector",
    "DeviceView",
    "NamedView",
    "ResultCache",
    "SelectorCache",
    "compile_derived",
    "compile_selector",
    "device_view",
    "named_view",
    "warm_up",
]
