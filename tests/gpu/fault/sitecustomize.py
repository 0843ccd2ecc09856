# A naive disable of speculation, for the GPU tests and bench/gpu/shims-0.5.12-fault.toml: above
# batch size NAIVE_DISABLE_ABOVE_BS (8) EAGLEWorkerV2.forward_batch_generation returns no
# next_draft_input, which is what a developer who skips the draft would write. The shims must
# report SPEC2-NDI-SPECINFO. The bench puts this folder after its boot folders on PYTHONPATH;
# the sitecustomize this file shadows (the next one on sys.path) still runs afterwards.
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


def _chain_shadowed_sitecustomize():
    here = os.path.dirname(os.path.abspath(__file__))
    entries = [os.path.abspath(e) if e else "" for e in sys.path]
    after = entries.index(here) + 1 if here in entries else 0
    for entry in sys.path[after:]:
        candidate = os.path.join(entry, "sitecustomize.py") if entry else ""
        if entry and os.path.abspath(entry) != here and os.path.isfile(candidate):
            try:
                with open(candidate, encoding="utf-8") as fh:
                    exec(compile(fh.read(), candidate, "exec"), {"__name__": "sitecustomize", "__file__": candidate})
            except Exception as exc:  # never break interpreter start-up
                print(f"[fault] chained sitecustomize in {entry} failed: {exc!r}", file=sys.stderr)
            return


if not getattr(sys, "_naive_disable_boot_ran", False):
    sys._naive_disable_boot_ran = True
    try:
        from spectrace.shims.post_import import when_imported

        when_imported("sglang.srt.speculative.eagle_worker_v2", _patch)
    except Exception as _exc:
        print(f"[fault] not installed: {_exc!r}", file=sys.stderr)
    _chain_shadowed_sitecustomize()
