"""What a broken contract produces: the ``MODES`` (warn, raise, record), ``ContractViolation`` and
the one-line message that names the contract, the consumer's read and the producer's return."""

from __future__ import annotations

MODES = ("warn", "raise", "record")


class ContractViolation(RuntimeError):
    """A worker broke a catalog contract: raised in ``raise`` mode at the producer's return."""

    def __init__(self, contract: str, detail: str, consumer: dict | None, producer: dict | None):
        self.contract = contract
        self.detail = detail
        self.consumer = consumer or {}
        self.producer = producer or {}
        super().__init__(format_violation(contract, detail, self.consumer, self.producer))


def site_text(site: dict) -> str:
    if not site:
        return "?"
    where = f"{site.get('file', '?')}:{site.get('line', '?')}"
    return f"{where} ({site['qualname']})" if site.get("qualname") else where


def format_violation(contract: str, detail: str, consumer: dict, producer: dict) -> str:
    text = f"contract {contract} broken: {detail}"
    if consumer:  # a producer-sets contract names no consumer statement
        text += f"; consumer {site_text(consumer)}"
    if consumer.get("shape"):
        text += f" reads `{consumer['shape']}`"
    text += f"; producer {site_text(producer)}"
    ret = producer.get("return_site")
    if ret:
        text += f" returned at {site_text(ret)}"
    elif producer.get("return_sites"):
        text += " (return sites: " + ", ".join(str(r["line"]) for r in producer["return_sites"]) + ")"
    return text
