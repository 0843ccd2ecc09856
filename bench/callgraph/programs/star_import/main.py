"""Names brought in by from m import * (with and without __all__)."""
from star_import.lib import *
from star_import.lib2 import *


def main():
    public()
    Tool().use()
    util()


def hidden():
    pass


def other():
    hidden()
