"""The loop that reads the draft runs only where the dispatcher saw no pipeline stage: the
worker's stage return never reaches the read (the entry condition of event_loop_normal)."""


def dispatch_event_loop(scheduler, batch):
    if scheduler.staged:
        scheduler.event_loop_staged(batch)
    else:
        scheduler.event_loop_normal(batch)
