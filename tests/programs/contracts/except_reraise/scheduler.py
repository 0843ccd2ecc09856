"""The draft's lens written in a try whose AttributeError handler logs and raises again: the crash goes on."""
import logging

from .results import Draft, Result  # noqa: F401 (the worker imports them from here)
from .worker import DraftWorker

logger = logging.getLogger(__name__)


class Scheduler:
    def __init__(self):
        self.worker = DraftWorker()

    def run_batch(self, batch):
        result = self.worker.forward(batch)
        try:
            result.draft.lens = []
        except AttributeError:
            logger.error("no draft")
            raise
