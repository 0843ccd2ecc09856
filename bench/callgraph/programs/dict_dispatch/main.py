"""A dict of callables indexed by constant keys: a literal key, a constant imported from another
module, an entry added later at module level and an update."""
from dict_dispatch.keys import DELETE


def create():
    pass


def delete():
    pass


def audit():
    pass


def reset():
    pass


ACTIONS = {"create": create, "delete": delete}
ACTIONS["audit"] = audit
ACTIONS.update({"reset": reset})


def do_create():
    ACTIONS["create"]()


def do_delete():
    ACTIONS[DELETE]()


def do_audit():
    ACTIONS["audit"]()


def do_reset():
    ACTIONS["reset"]()


def main():
    do_create()
    do_delete()
    do_audit()
    do_reset()
