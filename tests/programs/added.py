"""What is appended or added to a list held by a name or an attribute is among its elements."""


def save():
    pass


def log():
    pass


class Button:
    def __init__(self):
        self.handlers = []

    def on_click(self, handler):
        self.handlers.append(handler)

    def click(self):
        for handler in self.handlers:
            handler()


def wire():
    b = Button()
    b.on_click(save)


def local():
    fs = []
    fs.extend([log])
    fs[-1]()
