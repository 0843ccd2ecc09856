# Fault injection for the runtime-shims proof (docs/results/shims-0.5.12.md): the naive dynamic
# speculation disable that started the project, put into SGLang's EAGLEWorkerV2 at run time.
# Loaded in every Python process that has this folder on PYTHONPATH (behind spectrace's boot
# folder, whose sitecustomize chains to this one); active only with NAIVE_DISABLE_ABOVE_BS set.
#
# While "disabled" (a decode batch larger than NAIVE_DISABLE_ABOVE_BS requests) the v2 worker
# hands the scheduler a plain, non-speculative result:
#   NAIVE_DISABLE_STYLE=target  return self.target_worker.forward_batch_generation(batch), literally
#   NAIVE_DISABLE_STYLE=plain   run the step, then return only what the target worker's plain
#                               result carries (logits_output, next_token_ids, can_run_cuda_graph)
# Either way next_draft_input, accept_lens and speculative_num_draft_tokens are missing, which
# the overlap scheduler reads without a None check.
import os
import sys

_THRESHOLD = os.environ.get("NAIVE_DISABLE_ABOVE_BS")


def _inject(module):
    cls = module.EAGLEWorkerV2
    original = cls.__dict__["forward_batch_generation"]
    original = getattr(original, "__spectrace_wrapped__", original)
    threshold = int(_THRESHOLD)
    style = os.environ.get("NAIVE_DISABLE_STYLE", "plain")
    from sglang.srt.managers.utils import GenerationBatchResult

    def forward_batch_generation(self, model_worker_batch):
        disabled = (model_worker_batch.forward_mode.is_decode()
                    and len(model_worker_batch.seq_lens) > threshold)
        if not disabled:
            return original(self, model_worker_batch)
        if style == "target":
            return self.target_worker.forward_batch_generation(model_worker_batch)
        out = original(self, model_worker_batch)
        return GenerationBatchResult(logits_output=out.logits_output, next_token_ids=out.next_token_ids,
                                     can_run_cuda_graph=out.can_run_cuda_graph)

    cls.forward_batch_generation = forward_batch_generation
    print(f"[fault] pid {os.getpid()}: EAGLEWorkerV2.forward_batch_generation replaced by the naive "
          f"disable above batch size {threshold} (style {style})", file=sys.stderr, flush=True)


if _THRESHOLD:
    try:
        from spectrace.contracts.runtime import when_imported

        when_imported("sglang.srt.speculative.eagle_worker_v2", _inject)
    except Exception as exc:
        print(f"[fault] not injected: {exc!r}", file=sys.stderr)
