"""Errors raised by peerreduce: one class per result code of the C library, all under `Error`.

Every error carries the library's code (`code`, the prResult_t value) and its full message (`message`:
what, where, what to do), as the C library reported them.
"""

from __future__ import annotations

import builtins


class Error(Exception):
    """A peerreduce call failed. `code` is the C library's prResult_t, `message` its text."""

    code: int = -1
    name: str = "error"

    def __init__(self, message: str, code: int | None = None):
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code

    def __str__(self) -> str:  # the C library's message already says what, where and what to do
        return self.message


class InvalidArgumentError(Error, ValueError):
    """The caller passed something wrong; nothing was changed."""

    code, name = 1, "invalid argument"


class OutOfMemoryError(Error, MemoryError):
    """A pool or quota is exhausted; the message names the setting to change."""

    code, name = 2, "out of memory"


class TimeoutError(Error, builtins.TimeoutError):  # noqa: A001 - deliberately the library's name
    """A bounded wait expired; the message names rank, peer and step."""

    code, name = 3, "timeout"


class RemoteError(Error):
    """A peer reported an error of its own."""

    code, name = 4, "remote error"


class PeerLostError(Error):
    """A peer crashed or left."""

    code, name = 5, "peer lost"


class LinkDownError(Error):
    """A link between two ranks stopped working."""

    code, name = 6, "link down"


class AbortedError(Error):
    """The communicator was aborted; make a new one."""

    code, name = 7, "aborted"


class UnsupportedError(Error, NotImplementedError):
    """A valid request this build or platform cannot do."""

    code, name = 8, "unsupported"


class InternalError(Error):
    """A bug in peerreduce; please report it with the message."""

    code, name = 9, "internal error"


class UnavailableError(Error):
    """A resource (device, peer access, bootstrap, library) is not there."""

    code, name = 10, "unavailable"


class MismatchError(Error):
    """Ranks disagree (count, dtype, op, configuration, world size)."""

    code, name = 11, "mismatch"


class CorruptError(Error):
    """A message or handle received from a peer is malformed."""

    code, name = 12, "corrupt"


_BY_CODE = {cls.code: cls for cls in (InvalidArgumentError, OutOfMemoryError, TimeoutError, RemoteError,
                                      PeerLostError, LinkDownError, AbortedError, UnsupportedError, InternalError,
                                      UnavailableError, MismatchError, CorruptError)}


def from_code(code: int, message: str) -> Error:
    """The error of result `code` with `message` (an unknown code is an InternalError that says so)."""
    cls = _BY_CODE.get(code)
    if cls is None:
        return InternalError(f"unknown result code {code}: {message}", code)
    return cls(message)
