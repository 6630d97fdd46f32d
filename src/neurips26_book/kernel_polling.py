"""Wait for a kernel's replies in short slices, so a missed wake-up cannot stall the book's build.

nbclient waits for a cell's ``execute_reply`` with one long poll of the kernel's shell socket. With widget
traffic on the channels that poll can miss the socket's wake-up and sleep until the cell's timeout although
the reply has arrived (nbclient issue 312; seen here once in a smoke build on chapter 16's widget cell: the
kernel idle, the build waiting). Each new poll first checks, without waiting, whether a message is queued;
so :func:`install` makes the asynchronous channels wait in slices of :data:`SLICE_S` seconds up to the same
deadline. Nothing else changes: a reply that arrives is returned, and no reply by the deadline raises
``queue.Empty`` as before.
"""

from __future__ import annotations

import time
from queue import Empty
from typing import Any

SLICE_S = 1.0
"""Longest single wait on a kernel channel, in seconds."""

_MARK = "_neurips26_sliced"


def sliced(get_msg: Any) -> Any:
    """``get_msg(self, timeout)`` of an asynchronous channel, waiting in slices up to ``timeout``."""

    async def get_msg_in_slices(self: Any, timeout: float | None = None) -> dict[str, Any]:
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            try:
                return await get_msg(self, SLICE_S if left is None else min(SLICE_S, left))
            except Empty:
                if deadline is not None and time.monotonic() >= deadline:
                    raise

    setattr(get_msg_in_slices, _MARK, True)
    get_msg_in_slices.__doc__ = get_msg.__doc__
    return get_msg_in_slices


def install() -> None:
    """Make ``jupyter_client``'s asynchronous channels wait in slices (once per process)."""
    from jupyter_client.channels import AsyncZMQSocketChannel

    if not getattr(AsyncZMQSocketChannel.get_msg, _MARK, False):
        AsyncZMQSocketChannel.get_msg = sliced(AsyncZMQSocketChannel.get_msg)
