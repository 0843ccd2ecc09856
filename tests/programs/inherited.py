"""``self.m()``, ``cls.m()`` and ``super().m()`` written in a base class: the instance may be a subclass."""


class Shape:
    def area(self):
        return 0

    def describe(self):
        return self.area()

    @classmethod
    def make(cls):
        return cls.check()

    @classmethod
    def check(cls):
        pass


class Square(Shape):
    def area(self):
        return 4

    @classmethod
    def check(cls):
        pass


class Unit(Square):  # inherits Square's: no edge of its own
    pass


class Mixin:
    def save(self):
        super().save()  # nothing after Mixin in its own MRO; Store.save in Both's


class Store:
    def save(self):
        pass


class Both(Mixin, Store):
    pass
