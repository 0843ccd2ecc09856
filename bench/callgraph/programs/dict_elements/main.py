"""Functions stored in dicts and called by key."""


def on_add():
    pass


def on_remove():
    pass


def on_list():
    pass


def unrelated():
    pass


ROUTES = {"add": on_add, "remove": on_remove}


def main(cmd):
    ROUTES["add"]()
    ROUTES[cmd]()
    table = dict(ls=on_list)
    table["ls"]()
