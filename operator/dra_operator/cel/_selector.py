"""Compile a device selector: parse, check, generate Python, and wrap it for evaluation."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dra_operator.cel import _lib_core, _lib_ext, _lib_k8s, _lib_net, _lib_strings
from dra_operator.cel import _types as T
from dra_operator.cel._checker import Checker, CompileIssues, Environment, ResultTypeError
from dra_operator.cel._codegen import CodeGen
from dra_operator.cel._device import DeviceView
from dra_operator.cel._named import NamedView
from dra_operator.cel._ops import GLOBALS
from dra_operator.cel._parser import parse
from dra_operator.cel._text import CompileIssue, render_issue, render_issues
from dra_operator.cel._validate import ProgramError, validate
from dra_operator.errors import CELCompileError, CELRuntimeError

MAX_EXPRESSION_LENGTH = 10 * 1024

for _library in (_lib_core, _lib_k8s, _lib_ext, _lib_strings, _lib_net):
    _library.install()


@dataclass(frozen=True, slots=True)
class CELFeatures:
    """Feature gates that change what selectors see.

    The scheduler compiles in upstream's "stored expressions" environment, which declares
    `device.allowMultipleAllocations` and `includes()` whatever the gates say.
    `list_type_attributes` (DRAListTypeAttributes) turns list attributes into values (without
    it they fail every evaluation) and types attribute values `dyn` instead of `any`.
    Without `consumable_capacity` (DRAConsumableCapacity) the API server drops
    `allowMultipleAllocations` from slices, so it reads false.
    `named_resources`: 1.30's environment for ResourceClassParameters filters and
    ResourceClaimParameters requests (`attributes.<type>["name"]`, evaluated on a `NamedView`).
    `expose_lists`: 1.37 converts list values for CEL whatever the gate says (1.36 failed the
    evaluation), and types attribute values `dyn` whatever the gate says too: its type
    provider keeps the newest `kubernetes.DRADevice` declaration, the list-typed one.
    """

    list_type_attributes: bool = False
    consumable_capacity: bool = False
    expose_lists: bool = False
    named_resources: bool = False


DEFAULT_FEATURES = CELFeatures()


class CompiledSelector:
    """A selector compiled to a Python function; `matches` evaluates it on one device."""

    __slots__ = ("_fn", "_list_index", "expression", "features", "source")

    def __init__(self, expression: str, features: CELFeatures, source: str, fn: Any) -> None:
        self.expression = expression
        self.features = features
        self.source = source
        self._fn = fn
        self._list_index = 1 if features.list_type_attributes or features.expose_lists else 0

    def matches(self, device: DeviceView | NamedView) -> bool:
        """True or False; raises CELRuntimeError (or CELCostLimitError) as upstream errs."""
        error = device.errors[self._list_index]
        if error is not None:
            raise CELRuntimeError(error)
        try:
            result: bool = self._fn(device)
        except RecursionError:
            raise CELRuntimeError("max recursion depth exceeded") from None
        return result

    def __repr__(self) -> str:
        return f"CompiledSelector({self.expression!r})"


def compile_selector(
    expression: str, *, features: CELFeatures = DEFAULT_FEATURES
) -> CompiledSelector:
    """Compile `expression` in the DRA environment; raises CELCompileError with upstream text."""

    def result_error(exc: ResultTypeError) -> str:
        if features.named_resources:
            return "must evaluate to bool"
        return f"must evaluate to bool or the unknown type, not {exc}"

    source, fn = compile_python(
        expression, features, result_error=result_error, named_resources=features.named_resources
    )
    return CompiledSelector(expression, features, source, fn)


def compile_python(
    expression: str,
    features: CELFeatures,
    *,
    result_error: Callable[[ResultTypeError], str],
    accept: Callable[[T.Type], bool] | None = None,
    named_resources: bool = False,
) -> tuple[str, Any]:
    """`expression` parsed, checked and generated as the Python function `_selector(device)`,
    with its source; selectors and derived attributes share it, and upstream's compile-error
    texts with it. The result must be a bool unless `accept` allows its type; `result_error`
    words a result of another type."""
    if len(expression.encode()) > MAX_EXPRESSION_LENGTH:
        raise CELCompileError(f"Too long: may not be more than {MAX_EXPRESSION_LENGTH} bytes")
    env = Environment(
        list_type_attributes=features.list_type_attributes or features.expose_lists,
        named_resources=named_resources,
    )
    try:
        tree = parse(expression)
        checked = Checker(env).check(tree, accept=accept)
        validate(tree, checked)
    except CompileIssues as found:
        raise CELCompileError(
            "compilation failed: " + render_issues(expression, found.issues)
        ) from None
    except ProgramError as exc:
        raise CELCompileError(f"program instantiation failed: {exc}") from None
    except CompileIssue as issue:
        raise CELCompileError("compilation failed: " + render_issue(expression, issue)) from None
    except ResultTypeError as exc:
        raise CELCompileError(result_error(exc)) from None
    except RecursionError:
        raise CELCompileError("compilation failed: expression nested too deeply") from None
    generated = CodeGen(
        checked, consumable_capacity=features.consumable_capacity, named_resources=named_resources
    ).function(tree, any_result=accept is not None)
    namespace: dict[str, Any] = {**GLOBALS, **generated.namespace}
    try:
        code = compile(generated.source, "<cel>", "exec")
    except (RecursionError, SyntaxError, MemoryError):
        raise CELCompileError("compilation failed: expression nested too deeply") from None
    exec(code, namespace)
    return generated.source, namespace["_selector"]


class SelectorCache:
    """Bounded LRU of compiled selectors keyed by (expression, features).

    Only successes are cached, as upstream's `cel.Cache`; a compile error is raised again on
    every lookup (compiling it again is cheap and keeps failures out of the bound).
    `compilations` and `compilation_errors` count the compiles since creation (running totals
    for the operator's metrics, read when scraped).
    """

    def __init__(self, maxsize: int = 1024) -> None:
        self.maxsize = maxsize
        self._entries: OrderedDict[tuple[str, CELFeatures], CompiledSelector] = OrderedDict()
        self._lock = threading.Lock()
        self.compilations = 0
        self.compilation_errors = 0

    def get(self, expression: str, features: CELFeatures = DEFAULT_FEATURES) -> CompiledSelector:
        key = (expression, features)
        with self._lock:
            found = self._entries.get(key)
            if found is not None:
                self._entries.move_to_end(key)
                return found
            self.compilations += 1
        try:
            compiled = compile_selector(expression, features=features)
        except CELCompileError:
            with self._lock:
                self.compilation_errors += 1
            raise
        with self._lock:
            self._entries[key] = compiled
            while len(self._entries) > self.maxsize:
                self._entries.popitem(last=False)
        return compiled

    def __len__(self) -> int:
        return len(self._entries)
