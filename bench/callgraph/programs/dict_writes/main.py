"""Entries of dicts written after the display: a key written again holds its last value on the
paths after the write (at module level and in a function; under an `if` either value, in a loop
also the value the next pass writes), nested dicts read and written by two keys, an inner dict
written through its own name, update() with a display and with keywords, and a key a function
writes under its parameter."""


def first():
    pass


def second():
    pass


def third():
    pass


def fourth():
    pass


def fifth():
    pass


def hooked():
    pass


HANDLERS = {"run": first, "stop": first}
HANDLERS["run"] = second
HANDLERS["run"]()

NESTED = {"outer": {"inner": first}}
NESTED["outer"]["inner"] = third
NESTED["outer"]["inner"]()

HANDLERS.update({"stop": fourth})
HANDLERS["stop"]()
HANDLERS.update(stop=fifth)
HANDLERS["stop"]()

INNER = {"key": first}
OUTER = {"inner": INNER}
INNER["key"] = hooked
OUTER["inner"]["key"]()

HOOKS = {}


def register(name="start"):
    HOOKS[name] = hooked


register()
HOOKS["start"]()


def local(flag):
    table = {"go": first}
    table["go"] = second
    table["go"]()
    if flag:
        table["go"] = third
    table["go"]()
    table.update(go=fourth)
    for _ in range(2):
        table["go"]()
        table["go"] = fifth


def main():
    local(True)
