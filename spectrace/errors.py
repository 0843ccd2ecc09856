"""One error type for everything a user can get wrong: the CLI prints it as one line."""


class SpectraceError(Exception):
    """A user-facing failure: bad input, missing source, unreachable network.

    The CLI prints ``spectrace: <message>`` and exits with ``exit_code``.
    """

    exit_code = 2

    def __init__(self, message: str, exit_code: int | None = None):
        super().__init__(message)
        if exit_code is not None:
            self.exit_code = exit_code
