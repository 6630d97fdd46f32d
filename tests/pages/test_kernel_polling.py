"""The build's kernel channels wait in slices: a message that a long wait would miss is still found."""

import asyncio
import time
from queue import Empty

import pytest

from neurips26_book import kernel_polling
from neurips26_book.kernel_polling import install, sliced


class _Channel:
    """A channel whose first wait misses the message (as a lost wake-up would), the next finds it."""

    def __init__(self, arrives_after: int):
        self.calls: list[float | None] = []
        self.arrives_after = arrives_after

    async def get_msg(self, timeout=None):
        self.calls.append(timeout)
        if len(self.calls) > self.arrives_after:
            return {"msg_type": "execute_reply"}
        raise Empty


def test_a_reply_missed_by_the_first_wait_is_found_by_the_next_slice(monkeypatch):
    monkeypatch.setattr(kernel_polling, "SLICE_S", 0.01)
    channel = _Channel(arrives_after=2)
    get_msg = sliced(_Channel.get_msg)
    assert asyncio.run(get_msg(channel, timeout=600)) == {"msg_type": "execute_reply"}
    assert len(channel.calls) == 3 and all(t <= 0.01 for t in channel.calls)  # never one long wait


def test_no_reply_by_the_deadline_still_raises_empty(monkeypatch):
    monkeypatch.setattr(kernel_polling, "SLICE_S", 0.01)
    channel = _Channel(arrives_after=10**9)
    start = time.monotonic()
    with pytest.raises(Empty):
        asyncio.run(sliced(_Channel.get_msg)(channel, timeout=0.05))
    assert 0.04 <= time.monotonic() - start < 1.0


def test_install_wraps_jupyter_clients_async_channel_once():
    from jupyter_client.channels import AsyncZMQSocketChannel

    install()
    first = AsyncZMQSocketChannel.get_msg
    install()
    assert AsyncZMQSocketChannel.get_msg is first and getattr(first, "_neurips26_sliced", False)
