"""Property getters and setters run on attribute access."""


class Account:
    def __init__(self):
        self._balance = 0

    @property
    def balance(self):
        return self.compute()

    @balance.setter
    def balance(self, value):
        self.audit(value)
        self._balance = value

    def compute(self):
        return self._balance

    def audit(self, v):
        pass


def main():
    a = Account()
    x = a.balance
    a.balance = x + 5
