"""The dispatcher runs the loop that reads the draft on a pipeline stage too (no `else`): the
worker's stage return reaches the read."""


def dispatch_event_loop(scheduler, batch):
    if scheduler.staged:
        scheduler.event_loop_staged(batch)
    scheduler.event_loop_normal(batch)
