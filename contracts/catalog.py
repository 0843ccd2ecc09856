"""The checked-in contract catalog: ``contracts/catalog/*.toml``, one file per family.

Schema (docs/design.md): each file has ``family``, ``description`` and ``[[contract]]`` tables with
``id``, ``field``, ``owner``, ``consumer``, ``shape``, ``attribute_path``, ``kind``,
``path_condition``, ``versions``, ``rationale`` and an optional ``[contract.runtime]`` table.
Files without ``[[contract]]`` (``assumptions.toml``) are skipped.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

try:
    import tomllib
except ImportError:  # pragma: no cover - python 3.10
    import tomli as tomllib

from spectrace.errors import SpectraceError

CATALOG_DIR = Path(__file__).parent / "catalog"
KINDS = {"unconditional-read", "guarded-read", "relation"}


@dataclass
class CatalogContract:
    id: str
    field: str
    owner: str
    consumer: str
    shape: str
    kind: str = "unconditional-read"
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


def load_catalog(path: str | Path | None = None) -> list[CatalogContract]:
    """Contracts from a catalog directory or one TOML file (default: the packaged catalog)."""
    p = Path(path) if path is not None else CATALOG_DIR
    if p.is_dir():
        files = sorted(p.glob("*.toml"))
    elif p.is_file():
        files = [p]
    else:
        raise SpectraceError(f"no contract catalog at {p}")
    out: list[CatalogContract] = []
    seen: set[str] = set()
    for f in files:
        try:
            data = tomllib.loads(f.read_text())
        except tomllib.TOMLDecodeError as exc:
            raise SpectraceError(f"{f}: not valid TOML: {exc}")
        for raw in data.get("contract", []):
            missing = [k for k in ("id", "field", "owner", "consumer", "shape") if k not in raw]
            if missing:
                raise SpectraceError(f"{f}: contract {raw.get('id', '?')} lacks {', '.join(missing)}")
            if raw["id"] in seen:
                raise SpectraceError(f"{f}: duplicate contract id {raw['id']}")
            seen.add(raw["id"])
            kind = raw.get("kind", "unconditional-read")
            if kind not in KINDS:
                raise SpectraceError(f"{f}: contract {raw['id']}: kind must be one of {', '.join(sorted(KINDS))}")
            out.append(CatalogContract(
                id=raw["id"], field=raw["field"], owner=raw["owner"], consumer=raw["consumer"], shape=raw["shape"],
                kind=kind, attribute_path=list(raw.get("attribute_path", [raw["field"]])),
                path_condition=raw.get("path_condition", ""), versions=list(raw.get("versions", [])),
                rationale=raw.get("rationale", ""), family=data.get("family", f.stem), file=str(f),
                runtime=dict(raw.get("runtime", {})), sites=dict(raw.get("sites", {})),
            ))
    if not out:
        raise SpectraceError(f"the catalog at {p} holds no [[contract]]")
    return out
