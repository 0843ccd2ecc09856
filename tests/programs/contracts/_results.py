"""The result classes of the programs whose scheduler is their own (their results.py links here);
the copy is for those whose scheduler calls it."""
from dataclasses import dataclass
from typing import Optional


@dataclass
class Draft:
    lens: list


@dataclass
class Result:
    tokens: list
    draft: Optional[Draft] = None

    def copy_to_cpu(self, keep_tokens=True):
        if keep_tokens:
            self.tokens = list(self.tokens)
        self.draft.lens = list(self.draft.lens)
