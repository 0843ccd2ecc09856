"""The result handed to calls that write none of its attributes (a logger, isinstance) and a
tensor of it to an outside kernel: nothing the scheduler reads is undecided."""
import logging

from outside_kernels import fill_lens

from .scheduler import Draft, Result

logger = logging.getLogger(__name__)


class DraftWorker:
    def forward(self, batch) -> Result:
        lens = [len(batch)]
        fill_lens(lens)
        result = Result(tokens=[1], draft=Draft(lens=lens))
        logger.debug("step %s", result)
        assert isinstance(result, Result)
        return result
