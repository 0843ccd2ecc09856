"""Split each engine's C=1 request time into the series' steady cost and the rest.

    cd call1-table-c1 && python3 ../split_requests.py     # or call5-table-c1, call6-table-c1

Reads bench.json.xz (each request's client ms, ``run["latency"]``; or, where the bench was
stopped before it wrote one, the finished engines' result-NAME.json in results.tar.xz) and
logs.tar.xz (SGLang's decode log). Per engine: the median client ms of its C=1 requests, its difference to the mean of the two
baseline engines' medians, the part of that difference the steady decode step explains (127 decode
steps per 128-token request times the step difference), and the rest: the request boundary (the
reply, the next request's arrival and prefill), which decode_windows.py --boundaries 1 shows window
by window."""
import json
import lzma
import statistics
import sys
import tarfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench/gpu"))
import decode_windows as dw  # noqa: E402

DECODE_STEPS = 127  # 128 output tokens: the prefill makes the first
if Path("bench.json.xz").exists():
    results = json.loads(lzma.open("bench.json.xz").read())["results"]
else:  # a bench stopped at its budget before writing bench.json (call 6): its finished engines' results
    with tarfile.open("results.tar.xz") as tar:
        results = [json.load(tar.extractfile(m)) for m in tar.getmembers() if m.isfile()]
logs = dw.logs(Path("logs.tar.xz"))
client = {r["name"]: statistics.median(ms for run in r["runs"] if run["concurrency"] == 1
                                       for ms in run["latency"]["client_ms"])
          for r in results}
step = {name: dw.steady_ms(dw.windows(logs[name])[1], 1) for name in client}
boundary = {name: statistics.median(dw.boundary_excess_ms(dw.windows(logs[name])[1], 1)) for name in client}
ref_ms = statistics.mean(client[n] for n in ("baseline", "baseline2"))
ref_step = statistics.mean(step[n] for n in ("baseline", "baseline2"))
print("| engine | median client ms | difference to the baselines' mean | steady steps (127 x step difference) "
      "| rest | steady step ms | median boundary excess ms |")
print("|---|---|---|---|---|---|---|")
for name in client:
    diff = client[name] - ref_ms
    steady = DECODE_STEPS * (step[name] - ref_step)
    print(f"| {name} | {client[name]:.1f} | {diff:+.1f} | {steady:+.1f} | {diff - steady:+.1f} "
          f"| {step[name]:.3f} | {boundary[name]:.1f} |")
