__all__ = ["polish"]


def polish():
    pass


def internal():
    pass
