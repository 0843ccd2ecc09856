"""The plain worker runs when `spec.is_none()`; the draft is read under `spec.is_some()`, its complement."""
from dataclasses import dataclass
from typing import Optional

from .worker import DraftWorker, PlainWorker


@dataclass
class Draft:
    lens: list


@dataclass
class Result:
    tokens: list
    draft: Optional[Draft] = None


class Spec:
    def __init__(self, kind):
        self.kind = kind

    def is_none(self) -> bool:
        return self.kind is None

    def is_some(self) -> bool:
        return not self.is_none()


class Scheduler:
    def __init__(self, args):
        self.spec = Spec(args.kind)
        if self.spec.is_none():
            self.worker = PlainWorker()
        else:
            self.worker = DraftWorker()

    def run_batch(self, batch):
        result = self.worker.forward(batch)
        if self.spec.is_some():
            batch.lens = result.draft.lens
