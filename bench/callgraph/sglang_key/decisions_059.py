S = "srt/managers/scheduler.py"
SCHED = "sglang.srt.managers.scheduler.Scheduler"
ROOTS = {
    "Scheduler.event_loop_normal": (S, "Scheduler.event_loop_normal", SCHED),
    "Scheduler.event_loop_overlap": (S, "Scheduler.event_loop_overlap", SCHED),
    "Scheduler.run_batch": (S, "Scheduler.run_batch", SCHED),
    "Scheduler.process_batch_result": (S, "Scheduler.process_batch_result", SCHED),
    "SchedulerOutputProcessorMixin.process_batch_result_prefill": ("srt/managers/scheduler_output_processor_mixin.py", "SchedulerOutputProcessorMixin.process_batch_result_prefill", SCHED),
    "SchedulerOutputProcessorMixin.process_batch_result_decode": ("srt/managers/scheduler_output_processor_mixin.py", "SchedulerOutputProcessorMixin.process_batch_result_decode", SCHED),
    "EAGLEWorkerV2.forward_batch_generation": ("srt/speculative/eagle_worker_v2.py", "EAGLEWorkerV2.forward_batch_generation", "sglang.srt.speculative.eagle_worker_v2.EAGLEWorkerV2"),
}
LOCAL_EXT = {"deque": "collections.deque"}
NOT_EXT_METHODS = set()
WORKERS = ["TpModelWorker", "EAGLEWorker", "EAGLEWorkerV2", "MultiLayerEagleWorker", "MultiLayerEagleWorkerV2", "NGRAMWorker", "StandaloneWorker", "StandaloneWorkerV2"]
TREE_CACHES = ["ChunkCache", "SWAChunkCache", "RadixCacheCpp", "HiRadixCache", "SWARadixCache", "MambaRadixCache", "LMCRadixCache", "RadixCache"]
GRAMMARS = ["BaseGrammarObject", "GuidanceGrammar", "ReasonerGrammarObject", "XGrammarGrammar", "OutlinesGrammar"]
ATTRS = {"*": {
    "model_worker": WORKERS,            # scheduler.py:569/571: tp_worker or draft_worker (create_worker)
    "tp_worker": ["TpModelWorker"],     # scheduler.py:522
    "future_map": ["FutureMap"],        # scheduler.py:1008
    "spec_algorithm": ["SpeculativeAlgorithm"],
    "send_to_tokenizer": ["sglang.srt.managers.scheduler.SenderWrapper"],  # scheduler.py:446, the class of this module
    "device_module": "EXT", "forward_stream": "EXT", "result_queue": "EXT",
    "tree_cache": TREE_CACHES,          # scheduler.py:686-727
    "metrics_collector": ["SchedulerMetricsCollector"],
    "token_to_kv_pool_allocator": ["BaseTokenToKVPoolAllocator"],  # free_group_* defined once, on the base
    "decode_offload_manager": ["DecodeKVCacheOffloadManager"],
    "target_worker": ["TpModelWorker"],  # property over _target_worker, eagle_worker_v2.py:604
    "draft_worker": ["EagleDraftWorker", "StandaloneDraftWorker"],  # EAGLEWorkerV2 / StandaloneWorkerV2
}}
TYPED = {
    r"batch": ["ScheduleBatch"],
    r"req": ["sglang.srt.managers.schedule_batch.Req"],
    r"(model_worker_)?batch\.forward_mode": ["ForwardMode"],
    r"batch\.spec_algorithm": ["SpeculativeAlgorithm"],
    r"model_worker_batch\.sampling_info": ["SamplingBatchInfo"],
    r"envs\.\w+": ["sglang.srt.environ.EnvField"],
    r"req\.grammar": GRAMMARS,
    r"batch_result": ["GenerationBatchResult"],   # model_worker.forward_batch_generation returns it
    r"ret": ["sglang.srt.managers.scheduler.EmbeddingBatchResult"],
    r"self\.draft_worker": ["EagleDraftWorker", "StandaloneDraftWorker"],
    r"EagleDraftInput": ["EagleDraftInput"],
    r"verify_input": ["EagleVerifyInput"],        # EagleDraftWorker.draft returns it
    r"result\.copy_done": "EXT",
}
PATTERNS = {}
SITES = {
    "1161 pop_and_process": ("SKIP", "nested function, folded into the root"),
    "1173 pop_and_process": ("SKIP", "nested function, folded into the root"),
    "1166 batch.copy": (["ScheduleBatch.copy"], "batch: ScheduleBatch"),
    "2405 EmbeddingBatchResult": ("SKIP", "dataclass, no __init__ in source"),
    "2409 EmbeddingBatchResult": ("SKIP", "dataclass, no __init__ in source"),
    "2427 ActiveRanksOutput": ("SKIP", "dataclass, no __init__ in source"),
    "234 AbortReq": ("SKIP", "dataclass, no __init__ in source"),
    "526 AbortReq": ("SKIP", "dataclass, no __init__ in source"),
    "2454 trace_slice_batch": (["sglang.srt.tracing.trace.trace_slice_batch"], "imported function"),
    "237 trace_slice": (["sglang.srt.tracing.trace.trace_slice_end"], "trace_slice = trace_slice_end (trace.py:656)"),
    "272 trace_slice": (["sglang.srt.tracing.trace.trace_slice_end"], "trace_slice = trace_slice_end (trace.py:656)"),
    "320 trace_slice": (["sglang.srt.tracing.trace.trace_slice_end"], "trace_slice = trace_slice_end (trace.py:656)"),
    "179 release_kv_cache": (["sglang.srt.mem_cache.common.release_kv_cache"], "imported function"),
    "313 release_kv_cache": (["sglang.srt.mem_cache.common.release_kv_cache"], "imported function"),
    "478 release_kv_cache": (["sglang.srt.mem_cache.common.release_kv_cache"], "imported function"),
    "480 release_kv_cache": (["sglang.srt.mem_cache.common.release_kv_cache"], "imported function"),
    "665 speculative_moe_backend_context": (["sglang.srt.layers.moe.utils.speculative_moe_backend_context"], "imported function"),
    "665 speculative_moe_a2a_backend_context": (["sglang.srt.layers.moe.utils.speculative_moe_a2a_backend_context"], "imported function"),
    "685 speculative_moe_backend_context": (["sglang.srt.layers.moe.utils.speculative_moe_backend_context"], "imported function"),
    "685 speculative_moe_a2a_backend_context": (["sglang.srt.layers.moe.utils.speculative_moe_a2a_backend_context"], "imported function"),
    "694 speculative_moe_backend_context": (["sglang.srt.layers.moe.utils.speculative_moe_backend_context"], "imported function"),
    "694 speculative_moe_a2a_backend_context": (["sglang.srt.layers.moe.utils.speculative_moe_a2a_backend_context"], "imported function"),
}
for line in (663, 683, 692):
    SITES[f"{line} self.draft_worker.draft_tp_context"] = (["sglang.srt.speculative.spec_utils.draft_tp_context", "sglang.srt.utils.common.empty_context"], "attribute set to draft_tp_context or empty_context (eagle_worker_v2.py:164)")

# with-statements: entering runs __enter__/__exit__ of the object the expression returns
WITH = {
    663: (["sglang.srt.utils.common.EmptyContextManager.__enter__", "sglang.srt.utils.common.EmptyContextManager.__exit__"], "with self.draft_worker.draft_tp_context(...): empty_context() returns EmptyContextManager (utils/common.py:2748); draft_tp_context is a @contextmanager (contextlib)"),
    683: (["sglang.srt.utils.common.EmptyContextManager.__enter__", "sglang.srt.utils.common.EmptyContextManager.__exit__"], "same as line 663"),
    692: (["sglang.srt.utils.common.EmptyContextManager.__enter__", "sglang.srt.utils.common.EmptyContextManager.__exit__"], "same as line 663"),
}
