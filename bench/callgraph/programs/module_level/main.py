"""Calls made by module-level code."""
from module_level import lib


def setup():
    lib.configure()


def unused():
    pass


setup()
lib.Runner().go()
VALUE = lib.compute(2)
if VALUE:
    lib.configure()

if __name__ == "__main__":
    unused()
