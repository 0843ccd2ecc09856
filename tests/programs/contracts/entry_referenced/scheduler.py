"""The dispatcher calls the loop that reads the draft under its guard, but the loop is also
taken as a value (`loops.append(scheduler.event_loop_normal)`): where that value is called is not
known, so the guard is not assumed and the worker's stage return reaches the read."""


def dispatch_event_loop(scheduler, batch, loops):
    if scheduler.staged:
        scheduler.event_loop_staged(batch)
    else:
        scheduler.event_loop_normal(batch)
    loops.append(scheduler.event_loop_normal)
