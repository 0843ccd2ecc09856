# A naive disable of speculation, for the GPU tests and bench/gpu/shims-0.5.12-fault.toml: above
# batch size NAIVE_DISABLE_ABOVE_BS (8) EAGLEWorkerV2.forward_batch_generation returns no
# next_draft_input, which is what a developer who skips the draft would write. The shims must
# report SPEC2-NDI-SPECINFO. The bench puts this folder after its boot folders on PYTHONPATH;
# the sitecustomize this file shadows (the next one on sys.path) still runs afterwards.
import importlib.util
import os
import sys

ABOVE_BS = int(os.environ.get("NAIVE_DISABLE_ABOVE_BS") or 8)


def _patch(module):
    cls = module.EAGLEWorkerV2
    original = cls.forward_batch_generation
    if getattr(original, "_naive_disable", False):
        return

    def forward_batch_generation(self, model_worker_batch, *args, **kwargs):
        result = original(self, model_worker_batch, *args, **kwargs)
        if len(model_worker_batch.seq_lens) > ABOVE_BS:
            result.next_draft_input = None
        return result

    forward_batch_generation._naive_disable = True
    cls.forward_batch_generation = forward_batch_generation
    print(f"[fault] pid {os.getpid()}: naive disable above batch size {ABOVE_BS}", file=sys.stderr, flush=True)


if not getattr(sys, "_naive_disable_boot_ran", False):
    sys._naive_disable_boot_ran = True
    _here = os.path.dirname(os.path.abspath(__file__))
    _spec = importlib.util.spec_from_file_location("_gpu_sitechain", os.path.join(os.path.dirname(_here), "sitechain.py"))
    (_chain := importlib.util.module_from_spec(_spec)).__loader__.exec_module(_chain)
    _chain.boot(_here, "[fault]", "sglang.srt.speculative.eagle_worker_v2", _patch)
