"""CEL runtime values that Python lacks natively.

int, double, string, bytes, bool and null are Python's int, float, str, bytes, bool and None;
lists are tuples (or lists), maps dicts. `UInt` marks CEL's uint; `Semver` is Kubernetes'
semantic version (blang/semver rules, build metadata ignored in comparisons); `CelQuantity`
Kubernetes' quantity. `Optional` is CEL's optional_type; `CelType` a type value such as `int`.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from fractions import Fraction

from dra_operator.errors import CELRuntimeError
from dra_operator.model import Quantity


class UInt(int):
    """CEL uint: a distinct type so `1u == 1` is a heterogeneous, not an identical, comparison."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"{int(self)}u"


_NUMERIC = re.compile(r"^[0-9]*$")
_ALNUM = re.compile(r"^[0-9A-Za-z-]*$")


def _semver_number(part: str, what: str) -> int:
    if not _NUMERIC.match(part):
        raise ValueError(f'Invalid character(s) found in {what} number "{part}"')
    if len(part) > 1 and part[0] == "0":
        raise ValueError(f'{what.capitalize()} number must not contain leading zeroes "{part}"')
    if not part:
        raise ValueError('strconv.ParseUint: parsing "": invalid syntax')
    value = int(part)
    if value >= 2**64:
        raise ValueError(f'strconv.ParseUint: parsing "{part}": value out of range')
    return value


@dataclass(frozen=True, slots=True)
class Semver:
    """A semantic version as Kubernetes' CEL `Semver` (github.com/blang/semver/v4)."""

    major: int
    minor: int
    patch: int
    pre: tuple[int | str, ...] = ()
    build: tuple[str, ...] = ()
    # Semver precedence as one tuple: a release sorts after its prereleases, numeric
    # identifiers before alphanumeric ones, a shorter prerelease first; build is ignored.
    key: tuple[object, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        pre_key: tuple[object, ...] = (
            (0, *((0, p) if isinstance(p, int) else (1, p) for p in self.pre)) if self.pre else (1,)
        )
        object.__setattr__(self, "key", (self.major, self.minor, self.patch, pre_key))

    @classmethod
    def parse(cls, text: str) -> Semver:
        """blang/semver `Parse`; ValueError carries its message verbatim."""
        if not text:
            raise ValueError("Version string empty")
        parts = text.split(".", 2)
        if len(parts) != 3:
            raise ValueError("No Major.Minor.Patch elements found")
        major = _semver_number(parts[0], "major")
        minor = _semver_number(parts[1], "minor")
        rest = parts[2]
        build: list[str] = []
        pre: list[int | str] = []
        if "+" in rest:
            rest, _, meta = rest.partition("+")
            build = meta.split(".")
        pre_text = None
        if "-" in rest:
            rest, _, pre_text = rest.partition("-")
        patch = _semver_number(rest, "patch")
        if pre_text is not None:
            for item in pre_text.split("."):
                pre.append(_prerelease(item))
        for item in build:
            if not item:
                raise ValueError("Build meta data is empty")
            if not _ALNUM.match(item):
                raise ValueError(f'Invalid character(s) found in build meta data "{item}"')
        return cls(major, minor, patch, tuple(pre), tuple(build))

    @classmethod
    def parse_normalized(cls, text: str) -> Semver:
        """`semver(s, true)`: drop a `v`, strip leading zeroes, fill a short version."""
        text = text.removeprefix("v")
        parts = text.split(".", 2)
        for i, part in enumerate(parts):
            if len(part) > 1:
                part = part.lstrip("0")
                if not part or not part[0].isdigit():
                    part = "0" + part
                parts[i] = part
        if len(parts) < 3:
            if "+" in parts[-1] or "-" in parts[-1]:
                raise ValueError("short version cannot contain PreRelease/Build meta data")
            parts += ["0"] * (3 - len(parts))
        return cls.parse(".".join(parts))

    def compare(self, other: Semver) -> int:
        a = self.key
        b = other.key
        return (a > b) - (a < b)

    def __str__(self) -> str:
        text = f"{self.major}.{self.minor}.{self.patch}"
        if self.pre:
            text += "-" + ".".join(str(p) for p in self.pre)
        if self.build:
            text += "+" + ".".join(self.build)
        return text


def _prerelease(item: str) -> int | str:
    if not item:
        raise ValueError("Prerelease is empty")
    if _NUMERIC.match(item):
        if len(item) > 1 and item[0] == "0":
            raise ValueError(f'Numeric PreRelease version must not contain leading zeroes "{item}"')
        return int(item)
    if _ALNUM.match(item):
        return item
    raise ValueError(f'Invalid character(s) found in prerelease "{item}"')


class Optional:
    """CEL optional_type: `optional.of(v)` or `optional.none()`."""

    __slots__ = ("value",)
    _MISSING: object = object()

    def __init__(self, value: object = _MISSING) -> None:
        self.value = value

    def has_value(self) -> bool:
        return self.value is not Optional._MISSING

    def __repr__(self) -> str:
        return f"optional.of({self.value!r})" if self.has_value() else "optional.none()"


NONE = Optional()


@dataclass(frozen=True, slots=True)
class CelType:
    """A type as a value (`type(1) == int`)."""

    name: str

    def __str__(self) -> str:
        return self.name


def runtime_error(message: str) -> CELRuntimeError:
    return CELRuntimeError(message)


def no_such_overload(detail: str = "") -> CELRuntimeError:
    return CELRuntimeError(f"no such overload: {detail}" if detail else "no such overload")


_NANO = 10**9
_INT64_MAX = 2**63 - 1
_QUANTITY_TEXT = re.compile(
    r"^[+-]?0*(?P<num>\d*)(?:\.(?P<denom>\d*))?"
    r"(?P<suffix>Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?\d+)?$"
)
_BINARY_EXP = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL_EXP = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}


def go_quantity_scale(text: str) -> int | None:
    """The decimal scale of the int64 form `resource.ParseQuantity(text)` picks, None when
    upstream falls back to its arbitrary-precision form (then `AsInt64` always fails)."""
    match = _QUANTITY_TEXT.match(text)
    if match is None:
        return None
    num = match["num"] or "0"
    denom = match["denom"] or ""
    suffix = match["suffix"] or ""
    if suffix in _BINARY_EXP:
        if denom:
            return None
        exponent = _BINARY_EXP[suffix]
        precision = 15 - len(num) - int(exponent * 3 / 10) - 1
        scale = 0
        mantissa = int(num) << exponent
    else:
        scale = _DECIMAL_EXP[suffix] if suffix in _DECIMAL_EXP else int(suffix[1:])
        precision = 18 - len(num) - len(denom)
        mantissa = int(num + denom)
    if precision < 0:
        return None
    scale -= len(denom)
    if scale < -9 or mantissa > _INT64_MAX:
        return None
    return scale


@functools.lru_cache(maxsize=4096)
def _from_text(text: str, value: Fraction) -> CelQuantity:
    """Memoised: device views convert the same few capacity texts over and over."""
    return CelQuantity(int(value * _NANO), go_quantity_scale(text))


class CelQuantity:
    """Kubernetes' CEL `Quantity`: the exact value in integer nano-units, plus upstream's scale.

    `model.Quantity` already rounds to nano precision, so the integer is exact; comparing and
    adding integers keeps `compareTo` well under a microsecond. `scale` is the decimal scale of
    upstream's int64 representation (None for its arbitrary-precision one): `isInteger()` of
    `1000m` is false upstream although the value is 1.
    """

    __slots__ = ("nano", "scale")

    def __init__(self, nano: int, scale: int | None = 0) -> None:
        self.nano = nano
        self.scale = scale

    @classmethod
    def from_model(cls, quantity: Quantity) -> CelQuantity:
        return _from_text(str(quantity), quantity.value)

    def combine(self, other: CelQuantity, nano: int) -> CelQuantity:
        """The result of `add`/`sub`: int64 arithmetic at the finer scale while it fits."""
        scale = None
        if self.scale is not None and other.scale is not None:
            scale = min(self.scale, other.scale)
            if abs(nano) > _INT64_MAX * 10 ** (9 + scale):
                scale = None
        return CelQuantity(nano, scale)

    def compare(self, other: CelQuantity) -> int:
        a = self.nano
        b = other.nano
        return (a > b) - (a < b)

    @property
    def sign(self) -> int:
        return (self.nano > 0) - (self.nano < 0)

    def as_float(self) -> float:
        return self.nano / _NANO

    def as_int64(self) -> int | None:
        """`Quantity.AsInt64()`."""
        if self.scale is None or self.scale < 0:
            return None
        whole, rest = divmod(self.nano, _NANO)
        if rest or not -(2**63) <= whole <= _INT64_MAX:
            return None
        return whole

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CelQuantity) and self.nano == other.nano

    def __hash__(self) -> int:
        return hash(self.nano)

    def __repr__(self) -> str:
        return f"quantity({self.nano}n)"
