"""Where each controller named by `--controllers` is built: THE registration point.

To add a controller, write a builder `Callable[[Context], Plugin]` (see `_plugin.py`; the
claims controller in `_claims.py` is the example) and add ONE line below. The scheduler
controller (`controllers/scheduler/`) registers as `SCHEDULER: build_scheduler`, run together
with the routing parameters it needs beside kube-scheduler (`_routing.py`).
"""

from __future__ import annotations

from typing import Final

from dra_operator.app._claims import build_claims
from dra_operator.app._eviction import build_eviction
from dra_operator.app._plugin import Builder
from dra_operator.app._poolstatus import build_pool_status
from dra_operator.app._routing import with_routing_params
from dra_operator.app._scheduler import build_scheduler
from dra_operator.app._settings import CLAIMS, EVICTION, POOL_STATUS, SCHEDULER

BUILDERS: Final[dict[str, Builder]] = {
    CLAIMS: build_claims,
    SCHEDULER: with_routing_params(build_scheduler),
    EVICTION: build_eviction,
    POOL_STATUS: build_pool_status,
}
