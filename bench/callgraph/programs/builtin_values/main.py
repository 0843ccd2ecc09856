"""Methods of builtin values hand out what the program put in them (dict.items/values/get, list.pop)."""


def on_start():
    pass


def on_stop():
    pass


def fallback():
    pass


def last():
    pass


HANDLERS = {"start": on_start, "stop": on_stop}


def main():
    for _name, handler in HANDLERS.items():
        handler()
    label = ", ".join(name.upper() for name in HANDLERS)
    label.split(", ")
    HANDLERS.get("start", fallback)()
    stack = []
    stack.append(last)
    stack.pop()()
