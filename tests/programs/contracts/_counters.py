"""The mixin of the programs whose scheduler hands its result on (their counters.py links here):
it uses the draft in arithmetic."""


class CountersMixin:
    def record(self, batch, result):
        batch.steps += len(result.draft.lens)
