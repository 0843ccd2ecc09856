"""Drift between two extractions: what was added, removed, moved, re-guarded or re-conditioned.

Reads are matched by their stable id (field + module-free consumer + statement shape), so a read
that only changed line is *moved*. Unmatched reads are paired once more by field, attribute path,
method name and shape (a consumer whose class was renamed, or a mixin turned into a composed
object, keeps its method name): *moved* with the consumer change noted. Owner fields removed and
added are paired into *renamed* when a statement reading the old name reads the new one in B.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from spectrace.contracts.kinds import ReadKind
from spectrace.contracts.records import SCHEMA_VERSION, Extraction, FieldRead


@dataclass
class Change:
    change: str  # added, removed, moved, guard-changed, condition-changed, field-added, field-removed, field-renamed
    field: str
    consumer: str
    a_site: str = ""
    b_site: str = ""
    detail: str = ""
    read_id: str = ""


@dataclass
class Drift:
    a: str
    b: str
    a_fields: int
    b_fields: int
    changes: list = field(default_factory=list)
    a_root: str = ""  # each tree, as portable_root writes it (two trees of one version differ here)
    b_root: str = ""
    owner: str = ""  # the owner class whose fields are counted
    a_source: str = ""  # each source, as portable_source writes it
    b_source: str = ""

    @property
    def labels(self) -> tuple[str, str]:
        """How the two sides are named: their versions, else their trees, else their sources."""
        if self.a != self.b:
            return self.a, self.b
        if self.a_root != self.b_root:
            return f"{self.a} ({self.a_root})", f"{self.b} ({self.b_root})"
        if self.a_source != self.b_source:
            return self.a_source, self.b_source
        return self.a, self.b

    def to_json(self) -> dict:
        return {"schema_version": SCHEMA_VERSION, **asdict(self)}


def _site(r: FieldRead) -> str:
    return f"{r.file}:{r.line}"


def _scheduler_reads(x: Extraction) -> dict:
    return {r.id: r for r in x.reads if r.side == "scheduler" and r.kind != ReadKind.CHECK}


def diff_extractions(a: Extraction, b: Extraction) -> Drift:
    drift = Drift(a=a.version, b=b.version, a_fields=len(a.owner_fields), b_fields=len(b.owner_fields),
                  a_root=a.portable_root, b_root=b.portable_root, owner=a.owner,
                  a_source=a.portable_source, b_source=b.portable_source)
    fa = [f.name for f in a.owner_fields]
    fb = [f.name for f in b.owner_fields]
    removed_fields = [f for f in fa if f not in fb]
    added_fields = [f for f in fb if f not in fa]
    ra, rb = _scheduler_reads(a), _scheduler_reads(b)

    # renamed fields: a statement that read the old name reads the new one
    renamed = {}
    shapes_b = {(r.consumer.rsplit(".", 1)[-1], r.shape) for r in rb.values()}
    for old in removed_fields:
        for new in added_fields:
            if any((r.consumer.rsplit(".", 1)[-1], r.shape.replace(old, new)) in shapes_b
                   for r in ra.values() if r.field == old):
                renamed[old] = new
                break
    for old, new in renamed.items():
        drift.changes.append(Change("field-renamed", f"{old} -> {new}", a.owner, detail=f"{a.owner}.{old} is {b.owner}.{new}"))
    for f in removed_fields:
        if f not in renamed:
            drift.changes.append(Change("field-removed", f, a.owner))
    for f in added_fields:
        if f not in renamed.values():
            drift.changes.append(Change("field-added", f, b.owner))

    only_a = {k: v for k, v in ra.items() if k not in rb}
    only_b = {k: v for k, v in rb.items() if k not in ra}

    def pair_key(r, rename=None):
        shape = r.shape
        fld = r.field
        if rename and fld in rename:
            shape, fld = shape.replace(fld, rename[fld]), rename[fld]
        return (fld, r.consumer.rsplit(".", 1)[-1], shape.replace(" ", ""))

    by_key_b: dict = {}
    for k, r in only_b.items():
        by_key_b.setdefault(pair_key(r), []).append(k)
    paired = []
    for k, r in list(only_a.items()):
        cands = by_key_b.get(pair_key(r, renamed))
        if cands:
            kb = cands.pop(0)
            paired.append((r, only_b.pop(kb)))
            del only_a[k]
    for ida in sorted(set(ra) & set(rb)):
        paired.append((ra[ida], rb[ida]))

    for r1, r2 in sorted(paired, key=lambda p: (p[1].file, p[1].line)):
        fld = r1.field if r1.field == r2.field else f"{r1.field} -> {r2.field}"
        if r1.consumer != r2.consumer or r1.file != r2.file or r1.line != r2.line:
            detail = f"consumer {r1.consumer} -> {r2.consumer}" if r1.consumer != r2.consumer else ""
            drift.changes.append(Change("moved", fld, r2.consumer, _site(r1), _site(r2), detail, r2.id))
        g1 = sorted(g.kind for g in r1.guards)
        g2 = sorted(g.kind for g in r2.guards)
        if r1.guarded != r2.guarded or g1 != g2:
            drift.changes.append(Change(
                "guard-changed", fld, r2.consumer, _site(r1), _site(r2),
                f"{'; '.join(g.text for g in r1.guards) or 'unguarded'} -> {'; '.join(g.text for g in r2.guards) or 'unguarded'}",
                r2.id))
        if r1.path_condition != r2.path_condition:
            drift.changes.append(Change("condition-changed", fld, r2.consumer, _site(r1), _site(r2),
                                        f"{r1.path_condition or 'always'} -> {r2.path_condition or 'always'}", r2.id))
    for r in sorted(only_a.values(), key=lambda r: (r.file, r.line)):
        drift.changes.append(Change("removed", r.field, r.consumer, _site(r), "", r.shape, r.id))
    for r in sorted(only_b.values(), key=lambda r: (r.file, r.line)):
        drift.changes.append(Change("added", r.field, r.consumer, "", _site(r), r.shape, r.id))
    return drift


def drift_table(d: Drift, markdown: bool = False) -> str:
    counts: dict = {}
    for c in d.changes:
        counts[c.change] = counts.get(c.change, 0) + 1
    a, b = d.labels
    head = (f"{a} -> {b}: {d.owner} fields {d.a_fields} -> {d.b_fields}; "
            + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    rows = [(c.change, c.field, c.consumer, c.a_site.replace("sglang/srt/", ""), c.b_site.replace("sglang/srt/", ""), c.detail)
            for c in d.changes]
    cols = ("change", "field", "consumer", a, b, "detail")
    if markdown:
        out = [head, "", "| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
        for row in rows:
            out.append("| " + " | ".join(str(x).replace("|", "\\|") for x in row) + " |")
        return "\n".join(out) + "\n"
    widths = [min(max([len(cols[i])] + [len(str(r[i])) for r in rows]), 60) for i in range(5)]
    out = [head, "  ".join(cols[i].ljust(widths[i]) for i in range(5)) + "  detail"]
    for row in rows:
        out.append("  ".join(str(row[i])[:60].ljust(widths[i]) for i in range(5)) + "  " + row[5])
    return "\n".join(out) + "\n"
