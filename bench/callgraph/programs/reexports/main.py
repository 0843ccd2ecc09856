"""A package's names through its __init__ (re-exports, a star import of a submodule), a relative
import with a name, and the module-level code of an imported module."""
from reexports import begin, polish
from reexports.sub.tools import *  # noqa: F403
from .helpers import tidy as cleanup


def main():
    begin()
    polish()
    internal()  # noqa: F405 - not in __all__: the star import leaves it out
    cleanup()


def internal():
    pass
