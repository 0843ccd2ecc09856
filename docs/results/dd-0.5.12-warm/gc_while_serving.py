"""Which garbage collections of 5 ms or more (pyhook's PROBE_GC_MS=5 lines) fell while an engine
served requests: between its first and last decode log line.

    python3 gc_while_serving.py call1-table-c1/logs.tar.xz call2-pool/all.tar.xz ...

SGLang's decode lines carry whole seconds only, so a collection in the first or the last of those
seconds may lie just outside (the start-up's last collection, or the shutdown's first); the table
gives its time, process and length, and the request times say whether any request contains it."""
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench/gpu"))
import decode_windows as dw  # noqa: E402

DECODE = re.compile(r"^\[\d{4}-\d\d-\d\d (\d\d:\d\d:\d\d)\] Decode batch", re.M)
GC = re.compile(r"\[probe\] gc pid \d+ \(([^)]*)\) gen (\d): ([\d.]+) ms, collected \d+ at (\d\d:\d\d:\d\d\.\d+)")

print("| log | decode lines from | to | collections of 5 ms or more | while serving (time, process, gen, ms) |")
print("|---|---|---|---|---|")
for archive in sys.argv[1:]:
    for name, text in sorted(dw.logs(Path(archive)).items()):
        seconds = DECODE.findall(text)
        if not seconds:
            continue
        collections = GC.findall(text)
        inside = [c for c in collections if seconds[0] <= c[3][:8] <= seconds[-1]]
        cells = "; ".join(f"{t} {proc} gen {gen} {ms} ms" for proc, gen, ms, t in inside) or "none"
        print(f"| {archive}: {name} | {seconds[0]} | {seconds[-1]} | {len(collections)} | {cells} |")
