"""The structured-parameters allocator: pure, synchronous, no I/O.

`allocate` answers, for one candidate node, whether a set of claims can be allocated together
and with which devices — exactly as upstream's v1.36 allocator would under the `FirstFit`
policy — or explains why not. Callers provide the CEL seam (`SelectorEvaluator`), the ledger
of devices in use and the feature set of the Kubernetes release to mimic.
"""

from dra_operator.allocator._allocate import Allocation, allocate
from dra_operator.allocator._cel import CELSelectors
from dra_operator.allocator._explain import (
    Explanation,
    PoolProblem,
    Reason,
    RejectionGroup,
    RequestExplanation,
)
from dra_operator.allocator._features import Features
from dra_operator.allocator._inputs import (
    Budget,
    Ledger,
    Node,
    SelectorEvaluator,
    SharedDeviceID,
    consumed_capacity,
)
from dra_operator.allocator._named import (
    NamedAllocationError,
    NamedAllocator,
    NamedClaim,
    allocate_named,
    claim_parameters,
    class_parameters,
    taken_instances,
)
from dra_operator.allocator._policies import (
    BinPack,
    FirstFit,
    Policy,
    Spread,
    TopologyAffinity,
    policy_named,
)
from dra_operator.allocator._requests import Candidate, RequestData
from dra_operator.allocator._selection import SelectionMemo

__all__ = [
    "Allocation",
    "BinPack",
    "Budget",
    "CELSelectors",
    "Candidate",
    "Explanation",
    "Features",
    "FirstFit",
    "Ledger",
    "NamedAllocationError",
    "NamedAllocator",
    "NamedClaim",
    "Node",
    "Policy",
    "PoolProblem",
    "Reason",
    "RejectionGroup",
    "RequestData",
    "RequestExplanation",
    "SelectionMemo",
    "SelectorEvaluator",
    "SharedDeviceID",
    "Spread",
    "TopologyAffinity",
    "allocate",
    "allocate_named",
    "claim_parameters",
    "class_parameters",
    "consumed_capacity",
    "policy_named",
    "taken_instances",
]
