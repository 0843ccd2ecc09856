"""Class-hierarchy expansion: a receiver known only from its annotation may be any subclass."""


class Base:
    def run(self):
        pass


class Left(Base):
    def run(self):
        pass


class Plain(Base):  # inherits run: no edge of its own
    pass


class Deep(Left):
    def run(self):
        pass


def use(x: Base):
    x.run()


def made_here():
    Left().run()
