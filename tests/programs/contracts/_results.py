"""The result classes of the programs whose scheduler is their own (their results.py links here)."""
from dataclasses import dataclass
from typing import Optional


@dataclass
class Draft:
    lens: list


@dataclass
class Result:
    tokens: list
    draft: Optional[Draft] = None
