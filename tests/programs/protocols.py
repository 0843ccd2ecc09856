"""raise E calls E; a for loop over an object calls its __iter__/__next__ and yields their items;
a method missing from the tree comes from an external base class."""
import collections


class Failure(Exception):
    def __init__(self):
        super().__init__("failed")


class Item:
    def use(self):
        pass


class Items:
    def __iter__(self):
        return self

    def __next__(self) -> Item:
        return Item()


class Cache(collections.OrderedDict):
    def touch(self, key):
        self.move_to_end(key)


def fail():
    raise Failure


def walk():
    for item in Items():
        item.use()
