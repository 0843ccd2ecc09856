"""Callbacks stored in a list or an attribute and called later."""


class Button:
    def __init__(self):
        self.handlers = []

    def on_click(self, handler):
        self.handlers.append(handler)

    def click(self):
        for handler in self.handlers:
            handler()


class Timer:
    def __init__(self, callback):
        self.callback = callback

    def fire(self):
        self.callback()


def save():
    pass


def log():
    pass


def main():
    b = Button()
    b.on_click(save)
    b.click()
    t = Timer(callback=log)
    t.fire()
