"""bench.md for call 6, whose bench was stopped at its time budget before it wrote one (the bench
now writes its table after every configuration; this one ran before that change).

    cd call6-table-c1 && python3 ../render_cut_bench.py      # needs spectrace importable

Reads the finished configurations' result-NAME.json from results.tar.xz and renders them with the
bench's own renderer, with the options the table-c1 plan ran with (shims-0.5.12-gpu.sh table-c1:
C=1, 128 in / 128 out, 4 requests per run, 3 repetitions, warm after the flush, --mean-of
baseline,baseline2)."""
import json
import tarfile
from pathlib import Path

from spectrace.bench import summarize

ORDER = ["baseline", "patched", "baseline2", "patched2"]  # table-c1-0.5.12.toml
with tarfile.open("results.tar.xz") as tar:
    found = {Path(m.name).stem.removeprefix("result-"): json.load(tar.extractfile(m))
             for m in tar.getmembers() if Path(m.name).name.startswith("result-")}
results = [found[n] for n in ORDER if n in found]
common = dict(concurrency=[1], input_len=128, output_len=128, seq_reps=4, reps=3, warm_after_flush=True)
# only the table: the results archive holds the data
_, md = summarize(results, common, None, [], ["baseline", "baseline2"], pending=[n for n in ORDER if n not in found])
Path("bench.md").write_text(md)
print(md)
