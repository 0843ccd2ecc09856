"""classmethods and staticmethods, called on the class, on cls and on self."""


class Config:
    def __init__(self, name):
        self.name = name

    @classmethod
    def load(cls, name):
        cls.validate(name)
        return cls(name)

    @staticmethod
    def validate(name):
        check(name)

    def reload(self):
        return self.load(self.name)


class DevConfig(Config):
    @staticmethod
    def validate(name):
        pass


def check(n):
    pass


def main():
    c = Config.load("a")
    c.reload()
    DevConfig.load("b")
    Config.validate("x")
