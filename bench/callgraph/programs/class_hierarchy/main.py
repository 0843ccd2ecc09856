"""A receiver typed as a base class reaches the overrides; self.m() in a base method too."""


class Shape:
    def area(self):
        return 0

    def describe(self):
        return self.area()


class Square(Shape):
    def area(self):
        return 4


class Circle(Shape):
    def area(self):
        return 3


class Unit(Square):
    pass


class Unrelated:
    def area(self):
        return -1


def measure(shape: Shape):
    return shape.area()


def only_square(sq: Square):
    return sq.area()


def main():
    measure(Shape())
    measure(Square())
    measure(Circle())
    only_square(Unit())
    Shape().describe()
    Circle().describe()
    Unit().describe()
