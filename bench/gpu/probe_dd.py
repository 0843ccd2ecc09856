#!/usr/bin/env python3
"""sglang-gpu-probe driver (copied from shared/gpu/probe.py, extended for the dynamic-disable
patch series: --dd/--dd-above/--dd-below/--dd-accept for its server arguments, --env for
environment variables of the engine's processes, --vary-out to spread output lengths so the
running batch shrinks during a run (speculation switches back on), --dump to keep every
request's output_ids in results.jsonl for the greedy comparison, and the scheduler's
token-pool counters at idle from pyhook/sitecustomize.py).

One SGLang offline Engine per invocation.

Writes dummy Llama target / EAGLE-3 draft configs (no weights: load_format=dummy),
starts sglang.Engine with token-id input (skip_tokenizer_init), runs a warm-up,
then timed batches at the requested concurrencies, prints one RESULT line and
appends to $OUT/results.jsonl.  The scheduler-side counters come from
pyhook/sitecustomize.py (PROBE_HOOK=1) and are read from $PROBE_STATS_DIR.

  python3 probe.py --name eagle3-8b --model 8b --spec eagle3 --cuda-graph 1 \
      --conc 1,32 --out-len 128
"""
import argparse
import glob
import json
import os
import random
import sys
import time
from pathlib import Path

# the checkout's spectrace.bench (standard library only): C=1 request times in its run["latency"] shape
sys.path.append(str(Path(__file__).resolve().parents[2]))
from spectrace.bench import request_latency  # noqa: E402

# --------------------------------------------------------------------------
# dummy model configs
# --------------------------------------------------------------------------
SHAPES = {
    # bring-up: tiny and fast to start; head_dim 128 and GQA group 4 as in the 8B
    # shape, so that the JIT-compiled kernels (rope, triton attention) are shared
    "small": dict(hidden_size=1024, intermediate_size=2816, num_hidden_layers=4,
                  num_attention_heads=8, num_key_value_heads=2, vocab_size=32000,
                  aux_layer_ids=[0, 1, 2]),
    # Llama-3.1-8B shaped
    "8b": dict(hidden_size=4096, intermediate_size=14336, num_hidden_layers=32,
               num_attention_heads=32, num_key_value_heads=8, vocab_size=128256,
               aux_layer_ids=[1, 15, 28]),
}


def write_configs(shape, root):
    s = SHAPES[shape]
    tdir = os.path.join(root, f"target-{shape}")
    ddir = os.path.join(root, f"draft-{shape}")
    os.makedirs(tdir, exist_ok=True)
    os.makedirs(ddir, exist_ok=True)
    common = dict(
        model_type="llama", hidden_act="silu", rms_norm_eps=1e-5,
        hidden_size=s["hidden_size"], intermediate_size=s["intermediate_size"],
        num_attention_heads=s["num_attention_heads"],
        num_key_value_heads=s["num_key_value_heads"],
        head_dim=s["hidden_size"] // s["num_attention_heads"],
        vocab_size=s["vocab_size"], max_position_embeddings=8192,
        rope_theta=500000.0, bos_token_id=1, eos_token_id=2, pad_token_id=0,
        torch_dtype="bfloat16", tie_word_embeddings=False, attention_bias=False,
        initializer_range=0.02,
    )
    target = dict(common, architectures=["LlamaForCausalLM"],
                  num_hidden_layers=s["num_hidden_layers"])
    # EAGLE-3 draft as sglang/srt/models/llama_eagle3.py reads it: one decoder
    # layer whose qkv takes [embeds, hidden] (2*hidden), an fc over 3 aux hidden
    # states of the target (target_hidden_size * 3), and draft_vocab_size ==
    # vocab_size so there is no d2t/hot-token map (dummy weights have none).
    draft = dict(common, architectures=["LlamaForCausalLMEagle3"],
                 num_hidden_layers=1, draft_vocab_size=s["vocab_size"],
                 target_hidden_size=s["hidden_size"],
                 eagle_config={"eagle_aux_hidden_state_layer_ids": s["aux_layer_ids"],
                               "use_aux_hidden_state": True})
    for d, cfg in ((tdir, target), (ddir, draft)):
        with open(os.path.join(d, "config.json"), "w") as f:
            json.dump(cfg, f, indent=1)
    return tdir, ddir, s["vocab_size"]


# --------------------------------------------------------------------------
def read_sched_stats(stats_dir):
    out = {}
    for f in sorted(glob.glob(os.path.join(stats_dir, "sched-*.json"))):
        try:
            with open(f) as fh:
                out[os.path.basename(f)] = json.load(fh)
        except Exception as e:
            out[os.path.basename(f)] = {"error": repr(e)}
    return out


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser()
    ap.add_argument("--name", required=True)
    ap.add_argument("--model", default="small", choices=sorted(SHAPES))
    ap.add_argument("--spec", default="eagle3", choices=["eagle3", "standalone", "none"],
                    help="standalone: the draft is the target's own config; dummy weights are seeded "
                         "per parameter (initialize_dummy_weights), so draft == target and drafts are accepted")
    ap.add_argument("--cuda-graph", type=int, default=0)
    ap.add_argument("--conc", default="1,32")
    ap.add_argument("--in-len", type=int, default=128)
    ap.add_argument("--out-len", type=int, default=128)
    ap.add_argument("--seq-reps", type=int, default=3, help="sequential requests at concurrency 1")
    ap.add_argument("--reps", type=int, default=1,
                    help="time the whole --conc list this many times, in turn (runs carry 'rep')")
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--topk", type=int, default=1)
    ap.add_argument("--draft-tokens", type=int, default=4)
    ap.add_argument("--adaptive", type=int, default=0, help="--speculative-adaptive (0.5.14+ tiers)")
    ap.add_argument("--adaptive-config", default="",
                    help='JSON for --speculative-adaptive-config, e.g. {"1":{"candidate_steps":[1,3]}}')
    ap.add_argument("--attention-backend", default="triton")
    ap.add_argument("--mem-fraction", type=float, default=0.55)
    ap.add_argument("--max-bs", type=int, default=32)
    ap.add_argument("--piecewise", type=int, default=0,
                    help="keep SGLang's piecewise (prefill) CUDA graphs; off by default: "
                         "their capture over ~50 token counts costs start-up time")
    ap.add_argument("--extra", default="{}", help="JSON dict of extra ServerArgs fields")
    ap.add_argument("--models-dir", default="/tmp/probe-models")
    ap.add_argument("--dd", type=int, default=0, help="--speculative-dynamic-disable")
    ap.add_argument("--dd-above", type=int, default=None, help="--speculative-disable-above-bs")
    ap.add_argument("--dd-below", type=int, default=None, help="--speculative-enable-below-bs")
    ap.add_argument("--dd-accept", type=float, default=None,
                    help="--speculative-disable-below-accept-len (0: off)")
    ap.add_argument("--env", default="", help="K=V,K=V set before the engine starts")
    ap.add_argument("--vary-out", type=int, default=0,
                    help="request i of C gets out_len*(i+1)/C new tokens (batch shrinks during the run)")
    ap.add_argument("--dump", type=int, default=0, help="keep output_ids per request in results.jsonl")
    ap.add_argument("--switch-repeat", type=int, default=1, help="run the switch run this many times")
    ap.add_argument("--switch-run", type=int, default=0,
                    help="after the timed runs: N requests at once with output lengths out_len*(i+1)/N "
                         "(own fixed prompts), so the running batch shrinks from N to 1")
    ap.add_argument("--profile", default="",
                    help="C:N[,C:N]: after the timed runs, one untimed run at concurrency C (or "
                         "'switch': the --switch-run batch) with "
                         "SGLang's torch profiler (GPU activity) armed for its first N scheduler steps; "
                         "traces under $OUT/profile-<name>/ (bench/gpu/trace_kernels.py reads them)")
    ap.add_argument("--profile-cpu", type=int, default=0,
                    help="1: the --profile runs also record host activity with Python stacks (where the "
                         "scheduler spends a request's time outside the device's work; larger traces)")
    return ap


def main():
    a = parser().parse_args()

    out_dir = os.environ.get("OUT", "/tmp/probe-out")
    stats_dir = os.environ.setdefault("PROBE_STATS_DIR", os.path.join("/tmp/probe-stats", a.name))
    os.makedirs(stats_dir, exist_ok=True)
    for f in glob.glob(os.path.join(stats_dir, "sched-*.json")):
        os.remove(f)

    for kv in filter(None, a.env.split(",")):
        k, v = kv.split("=", 1)
        os.environ[k] = v
    tdir, ddir, vocab = write_configs(a.model, a.models_dir)
    t0 = time.time()
    import sglang
    from sglang.srt.entrypoints.engine import Engine

    t_import = time.time() - t0
    kw = dict(
        model_path=tdir, load_format="dummy", skip_tokenizer_init=True,
        attention_backend=a.attention_backend, sampling_backend="pytorch",
        grammar_backend="none", dtype="bfloat16", random_seed=0,
        mem_fraction_static=a.mem_fraction, max_running_requests=a.max_bs,
        cuda_graph_max_bs=a.max_bs, disable_cuda_graph=not a.cuda_graph,
        context_length=4096, log_level="info",
        disable_piecewise_cuda_graph=not a.piecewise,
    )
    if a.spec == "standalone":
        kw.update(speculative_algorithm="STANDALONE", speculative_draft_model_path=tdir,
                  speculative_eagle_topk=a.topk, speculative_num_steps=a.steps,
                  speculative_num_draft_tokens=a.draft_tokens)
    if a.spec == "eagle3":
        kw.update(speculative_algorithm="EAGLE3", speculative_draft_model_path=ddir,
                  speculative_eagle_topk=a.topk, speculative_num_steps=a.steps,
                  speculative_num_draft_tokens=a.draft_tokens)
        if a.adaptive:
            kw["speculative_adaptive"] = True
            if a.adaptive_config:
                path = os.path.join(a.models_dir, f"adaptive-{a.name}.json")
                with open(path, "w") as f:
                    json.dump(json.loads(a.adaptive_config), f)
                kw["speculative_adaptive_config"] = path
    if a.dd:
        kw["speculative_dynamic_disable"] = True
        for opt, field in (("dd_above", "speculative_disable_above_bs"),
                           ("dd_below", "speculative_enable_below_bs"),
                           ("dd_accept", "speculative_disable_below_accept_len")):
            if getattr(a, opt) is not None:
                kw[field] = getattr(a, opt)
    kw.update(json.loads(a.extra))
    # ServerArgs field names move between versions (0.5.17 renamed the graph knobs)
    import dataclasses

    from sglang.srt.server_args import ServerArgs

    fields = {f.name for f in dataclasses.fields(ServerArgs)}
    renames = {"cuda_graph_max_bs": "cuda_graph_max_bs_decode",
               "disable_piecewise_cuda_graph": "disable_prefill_cuda_graph"}
    for old, new in renames.items():
        if old in kw and old not in fields and new in fields:
            kw[new] = kw.pop(old)
    dropped = {k: kw.pop(k) for k in list(kw) if k not in fields}
    if dropped:
        print(f"[probe] ServerArgs has no fields {sorted(dropped)}: dropped", flush=True)
    print(f"[probe] sglang {sglang.__version__} import {t_import:.1f}s; Engine kwargs: {kw}", flush=True)

    res = {"name": a.name, "sglang": sglang.__version__, "model": a.model, "spec": a.spec,
           "cuda_graph": a.cuda_graph, "kwargs": kw, "runs": []}
    t1 = time.time()
    eng = Engine(**kw)
    res["engine_start_s"] = round(time.time() - t1, 1)
    print(f"[probe] engine up in {res['engine_start_s']}s", flush=True)
    try:
        sa = eng.server_args if hasattr(eng, "server_args") else None
        if sa is not None:
            res["server_args_effective"] = {k: getattr(sa, k, None) for k in (
                "disable_overlap_schedule", "speculative_algorithm", "speculative_num_steps",
                "speculative_eagle_topk", "speculative_num_draft_tokens", "attention_backend",
                "disable_cuda_graph", "cuda_graph_max_bs", "cuda_graph_max_bs_decode",
                "max_running_requests", "speculative_adaptive") if hasattr(sa, k)}
            print(f"[probe] effective: {res['server_args_effective']}", flush=True)
    except Exception as e:
        print(f"[probe] server_args read failed: {e!r}", flush=True)

    rng = random.Random(1234)

    def prompts(n, ln):
        return [[rng.randrange(10, vocab - 10) for _ in range(ln)] for _ in range(n)]

    def gen(batch, out_len):
        sp = {"max_new_tokens": out_len, "ignore_eos": True, "temperature": 0.0}
        if a.vary_out and len(batch) > 1:
            n = len(batch)
            sp = [dict(sp, max_new_tokens=max(1, out_len * (i + 1) // n)) for i in range(n)]
        t = time.time()
        outs = eng.generate(input_ids=batch, sampling_params=sp)
        dt = time.time() - t
        if isinstance(outs, dict):
            outs = [outs]
        return outs, dt

    def summarize(outs):
        toks = sum(len(o.get("output_ids") or []) for o in outs)
        ver = sum((o.get("meta_info") or {}).get("spec_verify_ct", 0) or 0 for o in outs)
        ct = sum((o.get("meta_info") or {}).get("completion_tokens", 0) or 0 for o in outs)
        acc = (ct / ver) if ver else None
        return toks, ct, ver, acc

    # warm-up (JIT compiles triton kernels; excluded from timings)
    outs, dt = gen(prompts(2, a.in_len), 16)
    print(f"[probe] warm-up 2x16 in {dt:.1f}s; meta_info keys: {sorted((outs[0].get('meta_info') or {}).keys())}", flush=True)
    print(f"[probe] sample output_ids: {outs[0].get('output_ids')}", flush=True)
    maxc = max(int(c) for c in a.conc.split(","))
    outs, dt = gen(prompts(maxc, a.in_len), 16)
    print(f"[probe] warm-up {maxc}x16 in {dt:.1f}s", flush=True)

    # the concurrency list in turn, rep after rep: drift during the phase spreads over all levels
    for rep, c in [(r, int(x)) for r in range(a.reps) for x in a.conc.split(",")]:
        client_ms = []
        if c == 1:
            tot_t, allouts = 0.0, []
            for _ in range(a.seq_reps):
                o, dt = gen(prompts(1, a.in_len), a.out_len)
                tot_t += dt
                allouts += o
                client_ms.append(dt * 1e3)
            outs, dt = allouts, tot_t
        else:
            outs, dt = gen(prompts(c, a.in_len), a.out_len)
        toks, ct, ver, acc = summarize(outs)
        run = {"concurrency": c, "requests": len(outs), "output_tokens": toks,
               "wall_s": round(dt, 3), "tok_per_s": round(toks / dt, 1),
               "spec_verify_ct": ver, "accept_len": round(acc, 3) if acc else None, "rep": rep}
        if client_ms:
            # each request's wall time here and SGLang's own e2e_latency: a slow request
            # boundary is then inside or outside the server
            run["latency"] = request_latency(client_ms, outs)
        if a.dump:
            run["output_ids"] = [o.get("output_ids") for o in outs]
        res["runs"].append(run)
        run = {k: v for k, v in run.items() if k != "output_ids"}
        print(f"[probe] RUN {a.name} conc={c}: {run}", flush=True)

    def switch_batch(n):
        """The shrinking batch: n requests at once, request i with out_len*(i+1)/n new tokens."""
        srng = random.Random(4321)
        batch = [[srng.randrange(10, vocab - 10) for _ in range(a.in_len)] for _ in range(n)]
        sp = [{"max_new_tokens": max(1, a.out_len * (i + 1) // n), "ignore_eos": True,
               "temperature": 0.0} for i in range(n)]
        return batch, sp

    for rep_i in range(a.switch_repeat if a.switch_run else 0):
        n = a.switch_run
        batch, sp = switch_batch(n)
        t = time.time()
        outs = eng.generate(input_ids=batch, sampling_params=sp)
        dt = time.time() - t
        toks, ct, ver, acc = summarize(outs)
        run = {"concurrency": f"switch{n}" + (f"#{rep_i + 1}" if rep_i else ""), "requests": n, "output_tokens": toks,
               "wall_s": round(dt, 3), "tok_per_s": round(toks / dt, 1),
               "spec_verify_ct": ver, "accept_len": round(acc, 3) if acc else None}
        print(f"[probe] RUN {a.name} switch run: {run}", flush=True)
        if a.dump:
            run["output_ids"] = [o.get("output_ids") for o in outs]
        res["runs"].append(run)

    for spec in filter(None, a.profile.split(",")):
        c, n = spec.split(":")
        n = int(n)
        trace_dir = os.path.join(out_dir, f"profile-{a.name}", f"c{c}")
        os.makedirs(trace_dir, exist_ok=True)
        try:  # after the timed runs, and guarded: a profiler failure must not lose their results
            # the profiler stops itself after n steps (the prefill and the first n - 1 decode
            # steps), and writes nothing before: n must not exceed the run's steps
            eng.start_profile(output_dir=trace_dir, num_steps=n,
                              activities=["CPU", "GPU"] if a.profile_cpu else ["GPU"],
                              with_stack=bool(a.profile_cpu), record_shapes=False,
                              profile_prefix=f"{a.name}-c{c}")
            if c == "switch":  # the shrinking batch of --switch-run
                batch, sp = switch_batch(a.switch_run)
                t = time.time()
                eng.generate(input_ids=batch, sampling_params=sp)
                dt = time.time() - t
            else:
                _, dt = gen(prompts(int(c), a.in_len), a.out_len)
            time.sleep(2.0)  # the scheduler writes the trace after its last profiled step
            print(f"[probe] PROFILE {a.name} conc={c}: {n} steps armed, run {dt:.2f}s, "
                  f"files {sorted(os.listdir(trace_dir))}", flush=True)
        except Exception as e:
            print(f"[probe] PROFILE {a.name} conc={c} failed: {e!r}", flush=True)

    time.sleep(1.2)  # let the scheduler-side dumper write the final counters
    res["sched_stats"] = read_sched_stats(stats_dir)
    for k, v in res["sched_stats"].items():
        print(f"[probe] SCHED {k}: counts={v.get('counts')} workers={v.get('model_worker_classes')} "
              f"spec_workers={v.get('spec_workers')} errors={v.get('first_errors')} "
              f"seq_lens_ne={v.get('seq_lens_ne')}", flush=True)
        print(f"[probe] POOL {k}: {v.get('pool_idle')}", flush=True)
        print(f"[probe] SCHED {k}: missing_imports={v.get('missing_imports')}", flush=True)
    try:
        eng.shutdown()
    except Exception as e:
        print(f"[probe] shutdown: {e!r}", flush=True)
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "results.jsonl"), "a") as f:
        f.write(json.dumps(res, default=str) + "\n")
    print("[probe] RESULT " + json.dumps({"name": a.name, "engine_start_s": res["engine_start_s"],
                                          "runs": [{k: v for k, v in r.items() if k != "output_ids"}
                                                   for r in res["runs"]]}), flush=True)


if __name__ == "__main__":
    main()
