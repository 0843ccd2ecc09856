"""The checked-in contract catalog: ``contracts/catalog/*.toml``, one file per family.

Schema (docs/design.md): each file has ``family``, ``description`` and ``[[contract]]`` tables with
``id``, ``field``, ``owner``, ``consumer``, ``shape``, ``attribute_path``, ``kind``,
``path_condition``, ``versions``, ``rationale`` and an optional ``[contract.runtime]`` table.
Files without ``[[contract]]`` (``assumptions.toml``, ``roles.toml``) are skipped; ``load_catalog``
returns a ``Catalog`` (a list of contracts) that also carries the catalog's ``roles`` (who is owner,
consumer and worker: ``contracts/roles.py``) and its ``assumptions``.

A ``kind = "producer-sets"`` contract names a producer instead of a consumer: ``producer =
"Class.method"`` must set ``fields`` (attributes of a returned ``owner``) on every return path;
``fields_by_version`` replaces the list on the versions it names, and ``only_if_producer_exists =
true`` makes it apply only to trees that define the producer (a patched tree): elsewhere it is
``not-applicable``. ``field``, ``consumer`` and ``shape`` are derived for it (first field, the
producer, a one-line description).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

try:
    import tomllib
except ImportError:  # pragma: no cover - python 3.10
    import tomli as tomllib

from spectrace.contracts.kinds import ContractKind
from spectrace.errors import SpectraceError

CATALOG_DIR = Path(__file__).parent
KINDS = {k.value for k in ContractKind}
READ_KEYS = ("id", "field", "owner", "consumer", "shape")
PRODUCER_KEYS = ("id", "owner", "producer", "fields")


@dataclass
class CatalogContract:
    id: str
    field: str
    owner: str
    consumer: str
    shape: str
    kind: ContractKind = ContractKind.UNCONDITIONAL_READ
    attribute_path: list = field(default_factory=list)
    path_condition: str = ""
    versions: list = field(default_factory=list)
    rationale: str = ""
    family: str = ""
    file: str = ""
    runtime: dict = field(default_factory=dict)
    sites: dict = field(default_factory=dict)  # version -> "file:line" where the contract was recorded
    # the read ids as `extract` names them, for information (ids follow from field, consumer, shape)
    related: list = field(default_factory=list)
    # kind "producer-sets" only
    producer: str = ""  # "Class.method"
    fields: list = field(default_factory=list)
    fields_by_version: dict = field(default_factory=dict)  # version -> fields (replaces `fields` there)
    only_if_producer_exists: bool = False

    def fields_for(self, version: str) -> list:
        """The fields a producer-sets contract names for ``version``."""
        return list(self.fields_by_version.get(version, self.fields))

    def all_fields(self) -> list:
        """Every field the contract names on any version (what the extraction must track)."""
        out = list(self.fields)
        for names in self.fields_by_version.values():
            out += [n for n in names if n not in out]
        return out


def _producer_contract(raw: dict, f: Path) -> dict:
    """The derived read-style keys of a producer-sets contract, after checking its own keys."""
    producer = raw["producer"]
    if not isinstance(producer, str) or producer.count(".") != 1:
        raise SpectraceError(f"{f}: contract {raw['id']}: producer must be \"Class.method\", not {producer!r}")
    fields = raw["fields"]
    by_version = raw.get("fields_by_version", {})
    lists = [fields, *by_version.values()]
    if not all(isinstance(x, list) and x and all(isinstance(n, str) for n in x) for x in lists):
        raise SpectraceError(f"{f}: contract {raw['id']}: fields (and fields_by_version values) must be non-empty lists of names")
    return {
        "field": raw.get("field", fields[0]),
        "consumer": raw.get("consumer", producer),
        "shape": raw.get("shape", f"every return sets {', '.join(fields)} on its {raw['owner']}"),
    }


class Catalog(list):
    """The contracts of one catalog, with the roles and assumptions the analysis takes from it."""

    def __init__(self, contracts=(), roles=None, assumptions=None, path: Path | None = None):
        super().__init__(contracts)
        self.roles = roles
        self.assumptions = assumptions
        self.path = path


def load_catalog(path: str | Path | None = None) -> Catalog:
    """Contracts from a catalog directory or one TOML file (default: the packaged catalog)."""
    from spectrace.contracts.roles import load_roles
    from spectrace.contracts.violations import load_assumptions

    p = Path(path) if path is not None else CATALOG_DIR
    if p.is_dir():
        files = sorted(p.glob("*.toml"))
    elif p.is_file():
        files = [p]
    elif not p.exists():
        raise SpectraceError(f"no contract catalog at {p}: no such file or directory")
    else:
        raise SpectraceError(f"no contract catalog at {p}: not a file or directory")
    out: list[CatalogContract] = []
    seen: set[str] = set()
    for f in files:
        try:
            data = tomllib.loads(f.read_text())
        except tomllib.TOMLDecodeError as exc:
            raise SpectraceError(f"{f}: not valid TOML: {exc}")
        for raw in data.get("contract", []):
            kind = raw.get("kind", "unconditional-read")
            missing = [k for k in (PRODUCER_KEYS if kind == ContractKind.PRODUCER_SETS else READ_KEYS) if k not in raw]
            if missing:
                raise SpectraceError(f"{f}: contract {raw.get('id', '?')} lacks {', '.join(missing)}")
            if raw["id"] in seen:
                raise SpectraceError(f"{f}: duplicate contract id {raw['id']}")
            seen.add(raw["id"])
            if kind not in KINDS:
                raise SpectraceError(f"{f}: contract {raw['id']}: kind must be one of {', '.join(sorted(KINDS))}")
            kind = ContractKind(kind)
            if kind == ContractKind.PRODUCER_SETS:
                raw = {**raw, **_producer_contract(raw, f)}
            out.append(CatalogContract(
                id=raw["id"], field=raw["field"], owner=raw["owner"], consumer=raw["consumer"], shape=raw["shape"],
                kind=kind, attribute_path=list(raw.get("attribute_path", [raw["field"]])),
                path_condition=raw.get("path_condition", ""), versions=list(raw.get("versions", [])),
                rationale=raw.get("rationale", ""), family=data.get("family", f.stem), file=str(f),
                runtime=dict(raw.get("runtime", {})), sites=dict(raw.get("sites", {})),
                producer=raw.get("producer", ""), fields=list(raw.get("fields", [])),
                fields_by_version={k: list(v) for k, v in raw.get("fields_by_version", {}).items()},
                only_if_producer_exists=bool(raw.get("only_if_producer_exists", False)),
            ))
    if not out:
        raise SpectraceError(f"the catalog at {p} holds no [[contract]]")
    # a catalog with roles of its own has only its own assumptions; else the packaged ones apply
    own = p.is_dir() and any((p / name).is_file() for name in ("roles.toml", "assumptions.toml"))
    return Catalog(out, roles=load_roles(p), path=p, assumptions=load_assumptions(p / "assumptions.toml") if own else None)
