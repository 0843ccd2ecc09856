def tool():
    pass


def _private():
    pass
