"""KV-pool counters in ``get_server_info()`` (``SPECTRACE_POOL_STATS=1``): each scheduler's
``internal_state`` carries them under ``spectrace_pool``. ``spectrace bench`` reads them before and
after each run, after a cache flush, for its "pools restored" check: ``token_free`` back at its
start value means no leaked slot. Works with the contract checks off."""

from __future__ import annotations

from typing import Callable

POOL_KEY = "spectrace_pool"


def pool_counters(scheduler, on_error: Callable[[str, BaseException], None] | None = None) -> dict:
    """KV-pool counters of one scheduler: free + evictable == capacity when nothing leaked. A
    counter that raised is left out, named with its error under ``errors``, and passed to
    ``on_error``."""
    out: dict = {}
    errors: dict = {}
    alloc = getattr(scheduler, "token_to_kv_pool_allocator", None)
    cache = getattr(scheduler, "tree_cache", None)
    req_pool = getattr(scheduler, "req_to_token_pool", None)
    for key, fn in (("token_free", getattr(alloc, "available_size", None)),
                    ("token_evictable", getattr(cache, "evictable_size", None)),
                    ("token_protected", getattr(cache, "protected_size", None)),
                    ("req_free", getattr(req_pool, "available_size", None))):
        if fn is not None:
            try:
                out[key] = int(fn())
            except Exception as exc:  # a pool class of another SGLang version
                errors[key] = repr(exc)
                if on_error is not None:
                    on_error(f"reading the KV-pool counter {key}", exc)
    total = getattr(scheduler, "max_total_num_tokens", None)
    if isinstance(total, int):
        out["token_capacity"] = total
        if "token_free" in out:
            out["token_used"] = total - out["token_free"] - out.get("token_evictable", 0)
    out["running"] = len(getattr(getattr(scheduler, "running_batch", None), "reqs", []) or [])
    out["waiting"] = len(getattr(scheduler, "waiting_queue", []) or [])
    if errors:
        out["errors"] = errors
    return out


def wrap_get_internal_state(original: Callable, before_answer: Callable[[], None],
                            on_error: Callable[[str, BaseException], None]) -> Callable:
    """``Scheduler.get_internal_state`` that adds the pool counters to its answer;
    ``before_answer()`` runs first (the shims write their summary there)."""

    def get_internal_state(scheduler, *args, **kwargs):
        out = original(scheduler, *args, **kwargs)
        before_answer()
        state = getattr(out, "internal_state", None)
        if isinstance(state, dict):
            try:
                state[POOL_KEY] = pool_counters(scheduler, on_error)
            except Exception as exc:  # never fail the server-info request itself
                on_error("reading the KV-pool counters", exc)
        return out

    return get_internal_state
