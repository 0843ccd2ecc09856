"""Key access for the typed records, as in their JSON form (``record["name"]``, ``record.get``)."""

from __future__ import annotations


class Record:
    """Key access to a dataclass record's fields, for callers written against its JSON object."""

    def __getitem__(self, name: str):
        try:
            return getattr(self, name)
        except AttributeError:
            raise KeyError(name) from None

    def get(self, name: str, default=None):
        return getattr(self, name, default)
