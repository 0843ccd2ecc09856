"""super() calls, single and multiple inheritance."""


class Base:
    def __init__(self):
        self.ready = True

    def save(self):
        self.validate()

    def validate(self):
        pass


class Mixin:
    def save(self):
        super().save()


class Child(Base):
    def __init__(self):
        super().__init__()

    def save(self):
        super().save()

    def validate(self):
        pass


class Grand(Mixin, Child):
    def save(self):
        super().save()


def main():
    Base().save()
    Child().save()
    Grand().save()
