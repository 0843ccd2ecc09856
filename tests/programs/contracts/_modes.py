"""The forward modes of the programs whose scheduler and worker test the batch's mode (their modes.py
links here): each predicate is true for a set of the members."""
from enum import IntEnum, auto


class ForwardMode(IntEnum):
    EXTEND = auto()
    DECODE = auto()
    MIXED = auto()
    IDLE = auto()

    def is_extend(self, include_mixed: bool = True):
        return self == ForwardMode.EXTEND or (include_mixed and self == ForwardMode.MIXED)

    def is_decode(self):
        return self == ForwardMode.DECODE

    def is_mixed(self):
        return self == ForwardMode.MIXED

    def is_idle(self):
        return self == ForwardMode.IDLE

    def is_decode_or_idle(self):
        return self == ForwardMode.DECODE or self == ForwardMode.IDLE
