from starpkg.tools import *


def use():
    tool()
