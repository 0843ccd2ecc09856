"""`self.overlap` is assigned twice: its first value says nothing, the CPU worker breaks the read."""
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

    def force_overlap(self):
        self.overlap = True

    def run_batch(self, batch):
        result = self.worker.forward(batch)
        if self.overlap:
            batch.lens = result.draft.lens
