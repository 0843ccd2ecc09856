"""The checker's vocabularies as enums: contract kinds, read kinds, contract statuses. Each member
is its string (``Status.PRESENT == "present"``), which is also how JSON, YAML and SARIF write it."""

from __future__ import annotations

from enum import Enum


class _Text(str, Enum):
    """A string enum whose str() and format() are its value (``enum.StrEnum`` from Python 3.11)."""

    def __str__(self) -> str:
        return self.value

    __format__ = str.__format__


class ContractKind(_Text):
    UNCONDITIONAL_READ = "unconditional-read"
    GUARDED_READ = "guarded-read"
    RELATION = "relation"  # a call as its shape: a value relayed through a callback (relays.py)
    PRODUCER_SETS = "producer-sets"  # a named producer sets fields on every return path


class ReadKind(_Text):
    UNCONDITIONAL = "unconditional-read"
    GUARDED = "guarded-read"
    CHECK = "check"  # the read is a condition itself


class GuardKind(_Text):
    """What establishes that a read's prefix is not None where it is read."""
    NOT_NONE_CHECK = "not-none-check"  # `x is not None`, `x != None`, the else of `x is None`
    TRUTHINESS = "truthiness"  # `if x:` or a deeper chain of it tested
    HASATTR = "hasattr"
    ISINSTANCE = "isinstance"
    GETATTR_DEFAULT = "getattr-default"  # `getattr(x, "a", default)`
    TRY_EXCEPT = "try-except"  # inside a `try` whose handler catches the AttributeError
    EARLY_EXIT = "early-exit"  # an earlier `if x is None: return`
    ASSERT = "assert"
    ALIAS_CHECK = "alias-check"  # a local alias of the field tested


class ProducerKind(_Text):
    CONSTRUCT = "construct"  # the owner built with keywords
    ASSIGN = "assign"  # a field assigned on a holder of the owner


class SiteKind(_Text):
    """Where a check found a contract that is not a read (a read's site has its ``ReadKind``)."""
    RELAY = "relay"  # the consumer passes the callback on
    RETURN = "return"  # a worker's or a producer's return


class SuccessorKind(_Text):
    FIELD = "field"  # the same target set from a read of the last attribute off something else
    STORE = "store"  # set from a store named after it (``<last>_buf``)
    CALLBACK = "callback"  # the worker hands the attribute to a function it was given


class Status(_Text):
    PRESENT = "present"
    MOVED = "moved"
    RELAXED = "relaxed"  # a guard now stands before an unconditional read
    NOT_APPLICABLE = "not-applicable"
    VIOLATED = "violated"
    UNGUARDED = "unguarded"
    CONDITION_CHANGED = "condition-changed"
    GONE = "gone"
    BROKEN = "broken"  # a producer-sets contract's producer misses a field
    UNKNOWN = "unknown"  # not decided: holds unless strict

    @property
    def holds(self) -> bool:
        return self in HOLDING


HOLDING = frozenset({Status.PRESENT, Status.MOVED, Status.RELAXED, Status.NOT_APPLICABLE})


def plain(value):
    """``value`` with every enum member replaced by its string (for YAML's safe dumper)."""
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, dict):
        return {plain(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value
