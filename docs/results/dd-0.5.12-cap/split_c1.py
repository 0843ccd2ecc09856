"""Run in call2-table-c1/ (or in ../dd-0.5.12-final/call6-table-c1/: python3 ../../dd-0.5.12-cap/split_c1.py)


Split a table-c1 call's per-repetition C=1 wall-time difference (patched - baseline, baseline2 - baseline) into: steady steps
(127 decode steps per request x the steady step difference), the request-boundary windows (3 per
repetition, in log order), and the rest (the first request after the idle gap, the measurement)."""
import json, lzma, sys, tarfile
sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[3] / "bench/gpu"))
import decode_windows as dw
bench = json.loads(lzma.open("bench.json.xz").read())
logs = dw.logs(__import__("pathlib").Path("logs.tar.xz"))
res = {r["name"]: r for r in bench["results"]}
steady = {n: dw.steady_ms(dw.windows(logs[n])[1], 1) for n in ("baseline", "patched", "baseline2")}
bound = {n: dw.boundary_excess_ms(dw.windows(logs[n])[1], 1) for n in steady}
print("| engine | repetition | baseline wall ms | its wall ms | difference | steady steps (4 x 127 x step difference) | boundary windows (it - baseline) | rest |")
print("|---|---|---|---|---|---|---|---|")
for other in ("patched", "baseline2"):
    for rep in range(3):
        wb = next(r["wall_s"] for r in res["baseline"]["runs"] if r.get("rep", 0) == rep) * 1e3
        wp = next(r["wall_s"] for r in res[other]["runs"] if r.get("rep", 0) == rep) * 1e3
        st = 4 * 127 * (steady[other] - steady["baseline"])
        bd = sum(bound[other][3 * rep:3 * rep + 3]) - sum(bound["baseline"][3 * rep:3 * rep + 3])
        print(f"| {other} | {rep} | {wb:.0f} | {wp:.0f} | {wp - wb:+.0f} | {st:+.1f} | {bd:+.1f} | {wp - wb - st - bd:+.1f} |")
