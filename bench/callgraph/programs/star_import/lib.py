__all__ = ["public", "Tool"]


def public():
    pass


def hidden():
    pass


class Tool:
    def use(self):
        pass
