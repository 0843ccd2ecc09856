"""The result's `__post_init__` counts its tokens (no field written)."""
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
        self.count = len(self.tokens)

