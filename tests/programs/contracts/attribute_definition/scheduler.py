"""`self.overlap` is assigned once, `not args.sync and not on_cpu()`: a read under it excludes the CPU worker."""
from dataclasses import dataclass
from typing import Optional

from .worker import CpuWorker, DraftWorker


def on_cpu() -> bool:
    return False


@dataclass
class Draft:
    lens: list


@dataclass
class Result:
    tokens: list
    draft: Optional[Draft] = None


class Scheduler:
    def __init__(self, args):
        self.overlap = not args.sync and not on_cpu()
        if on_cpu():
            self.worker = CpuWorker()
        else:
            self.worker = DraftWorker()

    def run_batch(self, batch):
        result = self.worker.forward(batch)
        if self.overlap:
            batch.lens = result.draft.lens
