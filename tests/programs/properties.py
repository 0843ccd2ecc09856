"""Reading or writing a property runs its getter or setter (one node, the property's)."""


def compute():
    return 1


def audit(v):
    pass


class Account:
    def __init__(self):
        self._balance = 0

    @property
    def balance(self):
        return compute()

    @balance.setter
    def balance(self, value):
        audit(value)
        self._balance = value

    def plain(self):
        return self._balance


def main():
    a = Account()
    x = a.balance
    a.balance = x + 1
    a.plain()
    return a._balance
