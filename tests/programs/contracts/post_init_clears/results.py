"""The result's `__post_init__` drops the draft of a result without tokens."""
from dataclasses import dataclass
from typing import Optional


@dataclass
class Draft:
    lens: list


@dataclass
class Result:
    tokens: list
    draft: Optional[Draft] = None

    def __post_init__(self):
        if not self.tokens:
            self.draft = None

