"""Callables passed by keyword, directly and through a name that holds the function called."""


def on_done():
    pass


def on_error():
    pass


def on_later():
    pass


def run(task, callback=None, errback=None):
    callback()
    errback()


def later(callback):
    callback()


def main():
    run(1, callback=on_done, errback=on_error)
    schedule = later
    schedule(callback=on_later)
