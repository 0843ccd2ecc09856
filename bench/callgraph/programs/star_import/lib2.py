def util():
    pass


def _private():
    pass
