"""Run by tests/test_core_runtime.py in a subprocess whose PYTHONPATH holds a patched SGLang tree:
the core's SpecDisableRuntime and its start-up refusal against SGLang's own ServerArgs,
ModelConfig, Req, ScheduleBatch, ReqToTokenPool, TokenToKVPoolAllocator and RadixCache, on the
CPU. Prints one JSON object (or `SKIP: reason` when SGLang's imports cannot be met here).

    python tests/core_runtime_cpu.py TARGET_DIR DRAFT_DIR

torchvision: SGLang imports it at module level (sglang/srt/utils/common.py: decode_jpeg;
multimodal/internvl_utils.py: transforms) and transformers' image processors, which sglang's
configs register at import, require it; nothing here decodes an image. The only torchvision wheels
for torch 2.13 are CUDA builds whose extension needs torch's CUDA libraries, so on a CPU torch
torchvision is stood in for by modules whose every name is a placeholder class."""

from __future__ import annotations

import dataclasses
import importlib.machinery
import json
import os
import sys
import types


class _Placeholder(type):
    def __getattr__(cls, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _Placeholder(name, (), {})


class _Absent(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _Placeholder(name, (), {})


def stand_in_for_torchvision() -> None:
    for name in ("torchvision", "torchvision.io", "torchvision.transforms", "torchvision.transforms.functional",
                 "torchvision.transforms.v2", "torchvision.transforms.v2.functional"):
        module = _Absent(name)
        module.__path__, module.__version__ = [], "0.28.0"
        module.__spec__ = importlib.machinery.ModuleSpec(name, None, is_package=True)
        sys.modules[name] = module


def server_args(target, draft, **overrides):
    from sglang.srt.server_args import ServerArgs

    kw = dict(model_path=target, speculative_algorithm="EAGLE3", speculative_draft_model_path=draft,
              speculative_eagle_topk=1, speculative_num_steps=3, speculative_num_draft_tokens=4,
              load_format="dummy", skip_tokenizer_init=True, attention_backend="triton", device="cpu",
              speculative_dynamic_disable=True)
    kw.update(overrides)
    sa = ServerArgs(**kw)
    if hasattr(sa, "resolve_once"):  # 0.5.23 resolves when a launcher asks, not at construction
        sa.resolve_once()
    return sa


def refusal(target, draft, allow=False, **overrides):
    """The one-line refusal ServerArgs raises, or None when it starts."""
    os.environ["SGLANG_SPEC_DYNAMIC_DISABLE_ALLOW_UNVERIFIED"] = "1" if allow else "0"
    try:
        server_args(target, draft, **overrides)
    except ValueError as exc:
        return str(exc)
    return None


def main(target: str, draft: str) -> dict:
    out = {
        "cpu_default": refusal(target, draft),
        "page_size": refusal(target, draft, page_size=16),
        "allowed": refusal(target, draft, allow=True),
        "without_the_flag": refusal(target, draft, speculative_dynamic_disable=False, page_size=16),
    }
    import torch

    from sglang.srt.configs.model_config import ModelConfig
    from sglang.srt.managers.schedule_batch import Req, ReqKvInfo, ScheduleBatch
    from sglang.srt.mem_cache.allocator.token import TokenToKVPoolAllocator
    from sglang.srt.mem_cache.base_prefix_cache import MatchPrefixParams
    from sglang.srt.mem_cache.cache_init_params import CacheInitParams
    from sglang.srt.mem_cache.common import release_kv_cache
    from sglang.srt.mem_cache.memory_pool import ReqToTokenPool
    from sglang.srt.mem_cache.radix_cache import RadixCache, RadixKey
    from sglang.srt.model_executor.forward_batch_info import ForwardMode
    from sglang.srt.runtime_context import publish
    from sglang.srt.sampling.sampling_params import SamplingParams
    from sglang.srt.speculative.dynamic_disable import SpecDisableRuntime

    os.environ["SGLANG_SPEC_DYNAMIC_DISABLE_ALLOW_UNVERIFIED"] = "1"
    sa = server_args(target, draft, speculative_disable_above_bs=16)
    publish(sa, role="test")
    # EAGLEWorkerV2 needs a model runner with memory pools and CUDA graphs; the runtime reads
    # only these of it before its first decode step
    worker = types.SimpleNamespace(
        server_args=sa, adaptive_controller=None, speculative_num_draft_tokens=4, speculative_num_steps=3,
        target_worker=types.SimpleNamespace(model_runner=types.SimpleNamespace(model_config=ModelConfig.from_server_args(sa))))
    runtime = SpecDisableRuntime(worker)
    pool = ReqToTokenPool(size=8, max_context_len=128, device="cpu", enable_memory_saver=False)
    alloc = TokenToKVPoolAllocator(size=512, dtype=torch.bfloat16, device="cpu", kvcache=None, need_sort=False)
    tree = RadixCache(CacheInitParams(disable=False, req_to_token_pool=pool, token_to_kv_pool_allocator=alloc,
                                      page_size=1, is_eagle=True))
    runtime.allocate(pool.req_to_token.shape[0])

    # 0.5.23 keeps a request's row and KV lengths in req.kv; 0.5.17 the row and committed length on it
    record_in_kv = "req_pool_idx" in {f.name for f in dataclasses.fields(ReqKvInfo)}

    def row(req):
        return req.kv.req_pool_idx if record_in_kv else req.req_pool_idx

    def request(rid, prompt, output, over=3):
        req = Req(rid, "", list(prompt), SamplingParams(max_new_tokens=max(1, len(output))))
        pool.alloc([req])
        n = len(prompt) + len(output)
        pool.req_to_token[row(req), : n + over] = alloc.alloc(n + over).to(torch.int32)
        req.output_ids = list(output)
        if record_in_kv:
            req.kv.kv_allocated_len, req.kv.kv_committed_len = n + over, n
        else:
            req.kv = ReqKvInfo(kv_allocated_len=n + over, swa_evicted_seqlen=0)
            req.kv_committed_len = n
        return req

    def release(req, insert=True):
        if record_in_kv:
            release_kv_cache(req, tree, checkpoint=insert)
        else:
            release_kv_cache(req, tree, is_insert=insert)

    def batch(reqs, **fields):
        b = ScheduleBatch(reqs=reqs, forward_mode=ForwardMode.DECODE, **fields)
        b.req_pool_indices_cpu = torch.tensor([row(r) for r in reqs], dtype=torch.int64)
        return b

    def cached(tokens):
        match = tree.match_prefix(MatchPrefixParams(key=RadixKey(list(tokens), None, is_bigram=True)))
        return match.device_prefix_len if hasattr(match, "device_prefix_len") else len(match.device_indices)

    reqs = [request(f"d{i}", range(10 + i, 18 + i), range(300, 304)) for i in range(4)]
    out["speculate"] = {
        "first_decision": runtime.speculate(batch(reqs)),
        "return_logprob": runtime.speculate(batch(reqs, return_logprob=True)),
        "above_bound_plain": runtime.speculate(batch(reqs * 5)),
        "above_bound_with_hidden_states": runtime.speculate(batch(reqs * 5, return_hidden_states=True)),
    }
    for r in reqs:
        release(r, insert=False)

    free = alloc.available_size()
    prompt, output = range(100, 108), range(200, 206)  # 14 tokens; plain steps decoded 11-13
    a = request("a", prompt, output)
    runtime.on_prefill(batch([a]))
    runtime.stale_from[row(a)] = 11
    runtime.before_release(a)
    release(a)
    out["stale_tail"] = {"cached": cached(list(prompt) + list(output)), "held": free - alloc.available_size()}
    # the next request in that row: a prefill resets it, nothing stale, all of it cached
    b = request("b", range(500, 508), range(600, 606))
    runtime.on_prefill(batch([b]))
    runtime.before_release(b)
    release(b)
    out["after_prefill"] = {"cached": cached(list(range(500, 508)) + list(range(600, 606)))}
    return out


if __name__ == "__main__":
    stand_in_for_torchvision()
    try:
        import sglang.srt.server_args  # noqa: F401
    except ImportError as exc:
        print(f"SKIP: SGLang's imports are not met on this machine ({exc})")
        sys.exit(0)
    print(json.dumps(main(sys.argv[1], sys.argv[2])))
