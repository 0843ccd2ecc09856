"""Calls through chains of attributes set in constructors."""


class Engine:
    def start(self):
        pass


class Car:
    def __init__(self):
        self.engine = Engine()


class Garage:
    def __init__(self):
        self.car = Car()

    def open(self):
        self.car.engine.start()


class Robot:
    def start(self):
        pass


def main():
    g = Garage()
    g.car.engine.start()
    g.open()
    Garage().car.engine.start()
