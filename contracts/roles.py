"""Who plays which part in a contract: the owner dataclass, the consumer class, the attribute of the
consumer whose class decides which worker answers, the worker method it calls, and the packages
scanned. Read from the catalog's ``[roles]`` table (``contracts/catalog/roles.toml`` for SGLang), so
the analysis names no class of SGLang and a small program with its own catalog is checked the same
way."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

try:
    import tomllib
except ImportError:  # pragma: no cover - python 3.10
    import tomli as tomllib

from spectrace.errors import SpectraceError

ROLES_FILE = "roles.toml"


@dataclass(frozen=True)
class Roles:
    owner: str  # the result dataclass the contracts are about
    consumer: str  # the class that receives the result (the scheduler)
    worker_attr: str  # the consumer's attribute holding the worker (polymorphic)
    worker_method: str  # the worker method called when no call of one is seen
    consumer_module: str = ""  # preferred module of the consumer when several classes share its name
    scope_packages: tuple[str, ...] = ()  # packages scanned whole (dotted), besides the files naming the owner
    worker_packages: tuple[str, ...] = ()  # worker side besides the worker classes' modules
    # the reads inside the owner's own methods that the consumer calls on a result
    # (``result.copy_to_cpu()``) count as the consumer's, under the call's condition
    owner_methods: bool = False
    # a consumer function that reads nothing of the worker's result but hands it on
    # (``self.process_batch_result(batch, result)``) is where the callee's reads get it too
    hand_on_receivers: bool = False
    # classes outside the scanned files whose predicate methods (``is_decode()``: ``self ==
    # ForwardMode.DECODE``) are read as sets of their members, so that two of them with no member
    # in common exclude each other (those of the scanned files' classes are read anyway)
    mode_enums: tuple[str, ...] = ()

    @property
    def worker_call_prefix(self) -> str:
        """How a holder bound from the worker's call is described (holders.py)."""
        return f"returned by self.{self.worker_attr}."


KEYS = ("owner", "consumer", "worker_attr", "worker_method")


def roles_from_table(table: dict, where: str) -> Roles:
    missing = [k for k in KEYS if not isinstance(table.get(k), str) or not table.get(k)]
    if missing:
        raise SpectraceError(f"{where}: [roles] lacks {', '.join(missing)}")
    packages = {k: table.get(k, []) for k in ("scope_packages", "worker_packages", "mode_enums")}
    for k, v in packages.items():
        if not isinstance(v, list) or not all(isinstance(p, str) for p in v):
            raise SpectraceError(f"{where}: [roles] {k} must be a list of "
                                 + ("class names" if k == "mode_enums" else "dotted package names"))
    return Roles(owner=table["owner"], consumer=table["consumer"], worker_attr=table["worker_attr"],
                 worker_method=table["worker_method"], consumer_module=table.get("consumer_module", ""),
                 scope_packages=tuple(packages["scope_packages"]), worker_packages=tuple(packages["worker_packages"]),
                 owner_methods=bool(table.get("owner_methods", False)),
                 hand_on_receivers=bool(table.get("hand_on_receivers", False)),
                 mode_enums=tuple(packages["mode_enums"]))


def load_roles(path: str | Path | None = None) -> Roles:
    """The ``[roles]`` table of a catalog directory (its roles.toml) or of one catalog file; a
    catalog without one gets the packaged catalog's roles."""
    from spectrace.contracts.catalog import CATALOG_DIR

    p = Path(path) if path is not None else CATALOG_DIR
    f = p / ROLES_FILE if p.is_dir() else p
    if f.is_file():
        try:
            table = tomllib.loads(f.read_text()).get("roles")
        except tomllib.TOMLDecodeError as exc:
            raise SpectraceError(f"{f}: not valid TOML: {exc}")
        if table is not None:
            return roles_from_table(table, str(f))
    if p.resolve() == CATALOG_DIR.resolve():
        raise SpectraceError(f"the packaged catalog lacks {ROLES_FILE}")
    return load_roles(None)
