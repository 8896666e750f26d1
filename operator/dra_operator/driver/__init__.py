"""driver: a simulated DRA driver, `dra-operator driver`, for realistic DRA without hardware.

It publishes ResourceSlices for one node from a declarative device inventory, registers with
the kubelet as a DRA plugin over gRPC and prepares the claims the kubelet asks for by writing
CDI specs whose container edits are environment variables naming the devices. What it prepared
is checkpointed, so a restart loses nothing. docs/driver.md describes the inventory, the
sockets and the variables containers get.

It uses `kube` for the API and `model` to check inventories and read claims; nothing of the
control-plane controllers, the allocator or kopf.

`ClassicDriver` is a fake classic (KEP-3063) driver for 1.31's control-plane protocol
(`dra-operator classic-driver`, docs/classic.md).
"""

from dra_operator.driver._cdi import CDI_VERSION, cdi_kind, spec_path
from dra_operator.driver._checkpoint import Checkpoint, PreparedClaim, PreparedDevice
from dra_operator.driver._classic import ClassicDriver, ClassicDriverSettings, finalizer_of
from dra_operator.driver._events import DriverEvent
from dra_operator.driver._grpc import DRA_SERVICE, DRAService, RegistrationService
from dra_operator.driver._inventory import (
    DEFAULT_DRIVER,
    Inventory,
    load_inventory,
    parse_inventory,
)
from dra_operator.driver._metrics import DriverMetrics
from dra_operator.driver._prepare import PrepareError, Preparer, RefusalReason
from dra_operator.driver._run import Driver, DriverSettings, run_driver, sockets
from dra_operator.driver._slices import CONTENT_ANNOTATION, SLICES, SlicePublisher

__all__ = [
    "CDI_VERSION",
    "CONTENT_ANNOTATION",
    "DEFAULT_DRIVER",
    "DRA_SERVICE",
    "SLICES",
    "Checkpoint",
    "ClassicDriver",
    "ClassicDriverSettings",
    "DRAService",
    "Driver",
    "DriverEvent",
    "DriverMetrics",
    "DriverSettings",
    "Inventory",
    "PrepareError",
    "PreparedClaim",
    "PreparedDevice",
    "Preparer",
    "RefusalReason",
    "RegistrationService",
    "SlicePublisher",
    "cdi_kind",
    "finalizer_of",
    "load_inventory",
    "parse_inventory",
    "run_driver",
    "sockets",
    "spec_path",
]
