S = "srt/managers/scheduler.py"
SCHED = "sglang.srt.managers.scheduler.Scheduler"
BRP = "sglang.srt.managers.scheduler_components.batch_result_processor.SchedulerBatchResultProcessor"
ROOTS = {
    "Scheduler.event_loop_normal": (S, "Scheduler.event_loop_normal", SCHED),
    "Scheduler.event_loop_overlap": (S, "Scheduler.event_loop_overlap", SCHED),
    "Scheduler.run_batch": (S, "Scheduler.run_batch", SCHED),
    "Scheduler.process_batch_result": (S, "Scheduler.process_batch_result", SCHED),
    "SchedulerBatchResultProcessor.process_batch_result_prefill": ("srt/managers/scheduler_components/batch_result_processor.py", "SchedulerBatchResultProcessor.process_batch_result_prefill", BRP),
    "SchedulerBatchResultProcessor.process_batch_result_decode": ("srt/managers/scheduler_components/batch_result_processor.py", "SchedulerBatchResultProcessor.process_batch_result_decode", BRP),
    "EAGLEWorkerV2.forward_batch_generation": ("srt/speculative/eagle_worker_v2.py", "EAGLEWorkerV2.forward_batch_generation", "sglang.srt.speculative.eagle_worker_v2.EAGLEWorkerV2"),
}
LOCAL_EXT = {"deque": "collections.deque"}
NOT_EXT_METHODS = set()
WORKERS = ["TpModelWorker", "MlxTpModelWorker", "DFlashWorkerV2", "UnoWorkerV2", "DSparkWorkerV2", "FrozenKVMTPWorkerV2", "MultiLayerEagleWorkerV2", "EAGLEWorkerV2", "StandaloneWorkerV2", "NGRAMWorker"]
GRAMMARS = ["BaseGrammarObject", "GuidanceGrammar", "ReasonerGrammarObject", "XGrammarGrammar", "OutlinesGrammar"]
ATTRS = {"*": {
    "model_worker": WORKERS,            # scheduler.py:1206/1208: tp_worker or draft_worker (create_worker; an out-of-tree platform worker is not SGLang code)
    "tp_worker": ["TpModelWorker", "MlxTpModelWorker"],     # scheduler.py:1029/1033
    "future_map": ["FutureMap"],        # scheduler.py:1681, create_future_map returns FutureMap
    "spec_algorithm": ["SpeculativeAlgorithm"],
    "metrics_reporter": ["SchedulerMetricsReporter"],   # scheduler.py:1430
    "scripted_scheduler_hook": ["ScriptedSchedulerHook"],  # scheduler.py:2424 (sglang.test.scripted_runtime)
    "profiler_manager": ["SchedulerProfilerManager"],   # scheduler.py:2385
    "invariant_checker": ["SchedulerInvariantChecker"], # scheduler.py:2524
    "load_publisher": ["SchedulerLoadPublisher"],       # scheduler.py:2573
    "batch_result_processor": ["SchedulerBatchResultProcessor"],  # scheduler.py:2664
    "beam_coordinator": ["BeamCoordinator"], "hisparse_coordinator": ["HiSparseCoordinator"],
    "output_streamer": ["SchedulerOutputStreamer"],
    "speculative_algorithm": ["SpeculativeAlgorithm"],
    "device_module": "EXT", "forward_stream": "EXT", "result_queue": "EXT",
    "tree_cache": ["CHA:BasePrefixCache"],  # scheduler.py:615 from create_tree_cache (registry, any BasePrefixCache)
    "metrics_collector": ["SchedulerMetricsCollector"],
    "token_to_kv_pool_allocator": ["CHA:BaseTokenToKVPoolAllocator"],  # from the pool factory
    "decode_offload_manager": ["DecodeKVCacheOffloadManager"],
    "target_worker": ["TpModelWorker"],  # property over _target_worker (base_spec_worker.py)
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
    r"ret": ["EmbeddingBatchResult"],
    r"allocator": ["CHA:BaseTokenToKVPoolAllocator"],   # allocator = self.token_to_kv_pool_allocator
    r"result": ["GenerationBatchResult"],
    r"result\.(routed_experts_output|indexer_topk_output)": ["TopkCaptureOutput"],
    r"req\.time_stats": ["CHA:SchedulerReqTimeStats"],
    r"batch\.spec_info": ["CHA:SpecInput"],
    r"self\.draft_worker": ["EagleDraftWorker", "StandaloneDraftWorker"],
    r"EagleDraftInput": ["EagleDraftInput"],
    r"verify_input": ["EagleVerifyInput"],        # EagleDraftWorker.draft returns it
    r"result\.copy_done": ["HostCopyDone"],   # Optional[Union[torch.cuda.Event, HostCopyDone]] (managers/utils.py:81); the Event part is torch
}
PATTERNS = {}
SITES = {
    "2112 batch.copy": (["ScheduleBatch.copy"], "batch: ScheduleBatch"),
    "2097 pop_and_process": ("SKIP", "nested function, folded into the root"),
    "2120 pop_and_process": ("SKIP", "nested function, folded into the root"),
    "4669 self._confidence_budget_prepare": (["DSparkVerifyPlanner.prepare_verify_budget"], "attribute set to draft_worker.get_confidence_budget_prepare() (scheduler.py:1694), the planner's bound prepare_verify_budget"),
    "1490 on_publish": (["FutureMap.publish"], "on_publish = partial(self.future_map.publish, ...) passed by Scheduler.run_batch (scheduler.py:4691)"),
}
