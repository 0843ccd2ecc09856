from .helpers import tidy


def start():
    tidy()
