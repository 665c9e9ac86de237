"""The feed's fan-out on direct sockets (dealer_ui/fanout.py, dealer_ui/hub.py): one frame built per message, the
same bytes the `websockets` library would send; a subscriber switched from its queue to its socket gets what it
lacks once, in order; one whose socket does not keep up is closed 1013 alone."""

from __future__ import annotations

import asyncio
import json
from typing import Any, cast

import pytest
from websockets.frames import Frame, Opcode

from dealer_ui import hub as hub_module
from dealer_ui.fanout import EXTENSION, direct_socket, text_frame
from dealer_ui.hub import SLOW, FeedHub, Subscription


@pytest.mark.parametrize("text", ["x" * size for size in (0, 1, 125, 126, 127, 65_535, 65_536, 70_000)]
                         + ["é" * 63, "Bänker ♦ 10♥ " * 10_000])  # fmt: skip
def test_a_text_frame_is_what_the_websockets_library_sends(text: str) -> None:
    # The three length forms at their edges; multi-byte characters, whose length is counted in bytes.
    expected = Frame(Opcode.TEXT, text.encode()).serialize(mask=False, extensions=[])
    assert text_frame(text) == expected


def test_the_socket_is_taken_from_the_scope_only_when_the_server_offers_it() -> None:
    socket = FakeSocket()
    assert direct_socket({"type": "websocket", "extensions": {EXTENSION: {"socket": socket}}}) is cast(Any, socket)
    assert direct_socket({"type": "websocket", "extensions": {"websocket.http.response": {}}}) is None
    assert direct_socket({"type": "websocket"}) is None


class FakeTransport:
    """What the hub uses of an asyncio transport; `unsent` bytes stand for what the peer has not read."""

    def __init__(self) -> None:
        self.written = bytearray()
        self.unsent = 0
        self.closing = False

    def write(self, data: bytes) -> None:
        assert not self.closing, "written after the connection closed"
        self.written += data

    def is_closing(self) -> bool:
        return self.closing

    def get_write_buffer_size(self) -> int:
        return self.unsent


class FakeSocket:
    def __init__(self) -> None:
        self.fake = FakeTransport()
        self.closed: tuple[int, str] | None = None

    @property
    def transport(self) -> FakeTransport:
        return self.fake

    def close(self, code: int, reason: str) -> None:
        self.closed = (code, reason)
        self.fake.closing = True

    def seqs(self) -> list[int]:
        """The seqs of the frames written, read back frame by frame."""
        data, seqs = bytes(self.fake.written), []
        while data:
            assert data[0] == 0x81 and data[1] < 126  # whole text frames, unmasked (short messages here)
            end = 2 + data[1]
            seqs.append(json.loads(data[2:end])["seq"])
            data = data[end:]
        return seqs


def message(seq: int) -> str:
    return json.dumps({"seq": seq, "type": "card"})


def test_going_direct_writes_what_the_queue_gathered_after_the_last_seq_then_each_message_once() -> None:
    async def scenario() -> None:
        hub = FeedHub()
        subscription = hub.subscribe("T1")
        for seq in (3, 4, 5):  # published while the subscriber read the log up to 4
            hub.deliver("T1", seq, message(seq))
        socket = FakeSocket()
        hub.go_direct(subscription, socket, last=4)  # type: ignore[arg-type]
        assert subscription.queue.empty()
        for seq in (6, 7):
            hub.deliver("T1", seq, message(seq))
        hub.deliver("T2", 8, message(8))  # another table's
        assert socket.seqs() == [5, 6, 7]
        assert subscription.queue.empty()  # nothing but the end ever comes on its queue now

    asyncio.run(scenario())


def test_a_subscriber_whose_socket_holds_too_much_is_closed_1013_alone_and_others_go_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(hub_module, "WRITE_LIMIT", 1000)

    async def scenario() -> None:
        hub = FeedHub()
        slow, fast = FakeSocket(), FakeSocket()
        subscriptions: list[Subscription] = []
        for socket in (slow, fast):
            subscription = hub.subscribe("T1")
            hub.go_direct(subscription, socket, last=0)  # type: ignore[arg-type]
            subscriptions.append(subscription)
        hub.deliver("T1", 1, message(1))
        slow.fake.unsent = 1000  # at the limit: still kept
        hub.deliver("T1", 2, message(2))
        assert slow.closed is None
        slow.fake.unsent = 1001
        hub.deliver("T1", 3, message(3))
        assert slow.closed is not None and slow.closed[0] == SLOW and slow.closed[1].startswith("too slow")
        hub.deliver("T1", 4, message(4))
        assert slow.seqs() == [1, 2, 3] and fast.seqs() == [1, 2, 3, 4]
        assert hub.subscribers("T1") == 1
        dropped = subscriptions[0]
        assert await dropped.queue.get() is None  # its route wakes up once, to end
        assert dropped.code is None  # the close frame is already written: the route sends nothing more

    asyncio.run(scenario())


def test_a_socket_that_is_closing_is_skipped_until_its_route_ends_the_subscription() -> None:
    async def scenario() -> None:
        hub = FeedHub()
        gone, there = FakeSocket(), FakeSocket()
        for socket in (gone, there):
            hub.go_direct(hub.subscribe("T1"), socket, last=0)  # type: ignore[arg-type]
        gone.fake.closing = True  # the client went away
        hub.deliver("T1", 1, message(1))
        assert gone.seqs() == [] and there.seqs() == [1]
        assert hub.subscribers("T1") == 2

    asyncio.run(scenario())


def test_a_subscription_ended_before_going_direct_stays_on_its_queue_to_end() -> None:
    async def scenario() -> None:
        hub = FeedHub()
        subscription = hub.subscribe("T1")
        subscription.end(1008, "the feed accepts only pings")
        socket = FakeSocket()
        hub.go_direct(subscription, socket, last=0)  # type: ignore[arg-type]
        assert subscription.socket is None and socket.closed is None
        assert await subscription.queue.get() is None and subscription.code == 1008  # the route closes it

    asyncio.run(scenario())
