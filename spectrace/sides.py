"""Which side of the scheduler/worker boundary an SGLang module is on: the one rule that the call
graphs, the contract extraction and the runtime shims share. Standard library only: the shims
import it inside SGLang's processes.
"""

from __future__ import annotations

import fnmatch

SCHEDULER = "scheduler"
WORKER = "worker"
OTHER = "other"

# Worker patterns win: the TP worker lives in managers/ next to the scheduler.
WORKER_SIDE = (
    "sglang.srt.speculative.*",
    "sglang.srt.managers.tp_worker*",
    "sglang.srt.model_executor.model_runner*",
    "sglang.srt.model_executor.*graph_runner*",
    "sglang.srt.hardware_backend.*",
)
# Plain data and enums shared by both sides: calling them is not crossing the boundary.
SHARED = ("sglang.srt.speculative.spec_info", "sglang.srt.model_executor.forward_batch_info")
SCHEDULER_SIDE = ("sglang.srt.managers.*", "sglang.srt.disaggregation.*")
# The module that defines the Scheduler class.
SCHEDULER_MODULE = "sglang.srt.managers.scheduler"


def side_of(module: str) -> str:
    """``scheduler``, ``worker`` or ``other`` for a dotted module name."""
    if module in SHARED:
        return OTHER
    if any(fnmatch.fnmatchcase(module, p) for p in WORKER_SIDE):
        return WORKER
    if any(fnmatch.fnmatchcase(module, p) for p in SCHEDULER_SIDE):
        return SCHEDULER
    return OTHER

