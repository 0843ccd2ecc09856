"""Dict entries as the program leaves them where they are read: a key written again, nested dicts,
update(), an entry a function writes under its parameter, writes that may not run, a key not known."""


def f1():
    pass


def f2():
    pass


def f3():
    pass


GLOBAL = {"a": f1}
GLOBAL["a"] = f2
GLOBAL["a"]()

NESTED = {"x": {"y": f1}}
NESTED["x"]["y"] = f3
NESTED["x"]["y"]()

REGISTRY = {}


def register(key="k"):
    REGISTRY[key] = f3


register()
REGISTRY["k"]()


def overwritten():
    d = {"a": f1, "b": f3}
    d["a"] = f2
    d["a"]()
    d["b"]()


def updated():
    d = {"a": f1}
    d.update({"a": f2})
    d["a"]()
    d.update(a=f3)
    d["a"]()


def branched(flag):
    d = {"a": f1}
    if flag:
        d["a"] = f2
    d["a"]()


def looped():
    d = {"a": f1}
    for _ in range(2):
        d["a"]()
        d["a"] = f2


def nested_read():
    d = {"x": {"y": f1}}
    d["x"]["y"]()
    d["x"]["y"] = f2
    inner = d["x"]
    inner["y"]()


def any_key(key):
    d = {"a": f1}
    d["a"] = f2
    d[key] = f3
    d[key]()


def later():
    GLOBAL["a"]()


def set_default():
    d = {"b": f1}
    d.setdefault("a", f2)
    d["a"]()


class Settings:
    def update(self, **values):
        pass

    def get(self, key):
        pass


SETTINGS = Settings()
SETTINGS.update(level=f1)


def configured():
    SETTINGS.get("level")
