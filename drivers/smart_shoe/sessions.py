"""The two ends of a smart-shoe link, sans I/O: values in, values and bytes out; time is passed in as seconds.

Rules held here, and why (docs/protocols/smart-shoe.md has the whole protocol):
- The device sends stop-and-wait: one frame in flight, the next only once it is acknowledged or given up. So the
  host receives frames in the order they were produced and cards can never swap places.
- The host ACKs every intact device frame, duplicates included (the device stops retransmitting only on an ACK).
  It NAKs a frame whose checksum failed but whose structure held, quoting the sequence number it seemed to carry:
  if that guess is wrong the device ignores it (no such frame in flight) or sends a duplicate, which is harmless.
  Anything else gets no answer; the device's ACK timeout covers it.
- A duplicate is a frame byte-for-byte equal to one of the last `duplicate_window` frames accepted with the same
  sequence number: a retransmission. Comparing content as well as the number means a device that restarts without
  saying HELLO, or a number that wraps round, can never make the host drop a new card as a duplicate. (The one
  loss left, the same card at the same number within the window after an unannounced restart, needs a device
  that breaks the HELLO rule below.)
- A device says HELLO with a fresh boot id first after each power-up; the host then forgets the old numbers. The
  device sends nothing else until its HELLO is acknowledged, and never gives a HELLO up. A repeated HELLO with the
  same boot id is an ordinary duplicate.
- Any intact device frame proves the device alive; none for `missed_heartbeats` heartbeat intervals marks it overdue.
"""

from __future__ import annotations

import enum
import math
from collections import OrderedDict, deque
from collections.abc import Iterable
from dataclasses import dataclass

from drivers.smart_shoe.framing import SEQ_MODULO, DecodedFrame, Decoder, FrameError, FrameErrorKind, encode_frame
from drivers.smart_shoe.messages import DEVICE_MESSAGE_CLASSES, Ack, DeviceMessage, Heartbeat, Hello, Nak


class NoticeKind(enum.Enum):
    DEVICE_HELLO = "device_hello"  # first HELLO this session has seen
    DEVICE_RESTARTED = "device_restarted"  # a HELLO with a new boot id: sequence numbers start over
    SEQUENCE_JUMP = "sequence_jump"  # accepted, but not the number after the last: frames were lost in between
    SEQUENCE_REUSED = "sequence_reused"  # a recent number with different content: a restart without HELLO?
    UNEXPECTED_MESSAGE = "unexpected_message"  # a host message (ACK/NAK) arrived from the device side


@dataclass(frozen=True, slots=True)
class Notice:
    kind: NoticeKind
    detail: str
    seq: int | None = None


@dataclass(frozen=True, slots=True)
class HostResult:
    """What one call to the host session produced. Write `reply` to the device before anything else."""

    messages: tuple[DecodedFrame, ...] = ()  # new device messages, in order, to hand on
    reply: bytes = b""  # ACK and NAK frames for the device
    errors: tuple[FrameError, ...] = ()  # damaged or not understood, with raw bytes, for the log and the pit boss
    notices: tuple[Notice, ...] = ()
    duplicates: int = 0  # retransmissions dropped (and acknowledged again)


class HostSession:
    def __init__(
        self,
        started_at: float,
        *,
        heartbeat_interval: float = 1.0,
        missed_heartbeats: int = 3,
        duplicate_window: int = 8,
    ) -> None:
        if heartbeat_interval <= 0 or missed_heartbeats < 1 or duplicate_window < 1:
            raise ValueError("heartbeat_interval, missed_heartbeats and duplicate_window must be positive")
        self._decoder = Decoder()
        self._heartbeat_timeout = heartbeat_interval * missed_heartbeats
        self._window = duplicate_window
        self._recent: OrderedDict[int, bytes] = OrderedDict()  # seq -> raw frame, last accepted last
        self._last_seq: int | None = None
        self._boot_id: int | None = None
        self._last_frame_at = started_at

    @property
    def last_frame_at(self) -> float:
        """When the last intact device frame arrived (the session's start until one has)."""
        return self._last_frame_at

    @property
    def boot_id(self) -> int | None:
        return self._boot_id

    def heartbeat_overdue(self, now: float) -> bool:
        return now - self._last_frame_at > self._heartbeat_timeout

    def feed(self, data: bytes, now: float) -> HostResult:
        """Bytes read from the device, straight into this session's decoder."""
        return self.receive(self._decoder.feed(data), now)

    def flush(self, now: float) -> HostResult:
        """Report what the decoder still holds, as when the link closes."""
        return self.receive(self._decoder.flush(), now)

    def receive(self, items: Iterable[DecodedFrame | FrameError], now: float) -> HostResult:
        """Frames and errors from a `Decoder`, in the order it produced them."""
        messages: list[DecodedFrame] = []
        errors: list[FrameError] = []
        notices: list[Notice] = []
        reply = bytearray()
        duplicates = 0
        for item in items:
            if isinstance(item, FrameError):
                if item.kind is FrameErrorKind.BAD_CHECKSUM and item.seq is not None:
                    reply += encode_frame(item.seq, Nak())
                    errors.append(item)
                elif item.intact and item.seq is not None:
                    # Intact but not understood: acknowledge (resending it cannot help) and report it once.
                    self._last_frame_at = now
                    reply += encode_frame(item.seq, Ack())
                    if self._is_duplicate(item.seq, item.raw):
                        duplicates += 1
                    else:
                        self._accept(item.seq, item.raw, notices)
                        errors.append(item)
                else:
                    errors.append(item)
                continue
            message = item.message
            if not isinstance(message, DEVICE_MESSAGE_CLASSES):
                notices.append(Notice(NoticeKind.UNEXPECTED_MESSAGE, f"{message.TYPE.name} from the device", item.seq))
                continue
            self._last_frame_at = now
            reply += encode_frame(item.seq, Ack())
            if isinstance(message, Hello) and message.boot_id != self._boot_id:
                kind = NoticeKind.DEVICE_HELLO if self._boot_id is None else NoticeKind.DEVICE_RESTARTED
                notices.append(Notice(kind, f"boot id 0x{message.boot_id:08x}, protocol {message.version}", item.seq))
                self._boot_id = message.boot_id
                self._recent.clear()
                self._last_seq = None
            elif self._is_duplicate(item.seq, item.raw):
                duplicates += 1
                continue
            self._accept(item.seq, item.raw, notices)
            messages.append(item)
        return HostResult(tuple(messages), bytes(reply), tuple(errors), tuple(notices), duplicates)

    def _is_duplicate(self, seq: int, raw: bytes) -> bool:
        return self._recent.get(seq) == raw

    def _accept(self, seq: int, raw: bytes, notices: list[Notice]) -> None:
        if seq in self._recent:
            notices.append(Notice(NoticeKind.SEQUENCE_REUSED, f"{seq} reused with different content", seq))
        elif self._last_seq is not None and seq != (self._last_seq + 1) % SEQ_MODULO:
            expected = (self._last_seq + 1) % SEQ_MODULO
            notices.append(Notice(NoticeKind.SEQUENCE_JUMP, f"expected {expected}, received {seq}", seq))
        self._recent.pop(seq, None)
        self._recent[seq] = raw
        while len(self._recent) > self._window:
            self._recent.popitem(last=False)
        self._last_seq = seq


@dataclass(frozen=True, slots=True)
class Undelivered:
    """A frame the device gave up on after `attempts` transmissions without an ACK."""

    seq: int
    message: DeviceMessage
    attempts: int


@dataclass(slots=True)
class _InFlight:
    seq: int
    message: DeviceMessage
    frame: bytes
    sent_at: float
    attempts: int = 1
    nak: bool = False


class DeviceSession:
    """The shoe's end: numbers frames, keeps the one in flight until it is acknowledged, and retransmits.

    `send` returns the frame to write now, or b"" when it is queued behind the frame in flight; call `due` after
    every `feed` and whenever `deadline` passes, and write what it returns.
    """

    def __init__(self, *, ack_timeout: float = 0.25, max_retries: int = 3, first_seq: int = 0) -> None:
        if ack_timeout <= 0 or max_retries < 0:
            raise ValueError("ack_timeout must be positive and max_retries not negative")
        self._ack_timeout = ack_timeout
        self._max_retries = max_retries
        self._next_seq = first_seq % SEQ_MODULO
        self._in_flight: _InFlight | None = None
        self._queue: deque[tuple[int, DeviceMessage, bytes]] = deque()
        self._decoder = Decoder()
        self._undelivered: list[Undelivered] = []
        self.link_errors = 0  # damaged frames from the host, ignored (the ACK timeout covers them)

    @property
    def idle(self) -> bool:
        return self._in_flight is None and not self._queue

    @property
    def in_flight(self) -> int | None:
        """The sequence number awaiting an ACK, if any."""
        return None if self._in_flight is None else self._in_flight.seq

    @property
    def queued(self) -> int:
        return len(self._queue)

    def send(self, message: DeviceMessage, now: float) -> bytes:
        if not isinstance(message, DEVICE_MESSAGE_CLASSES):
            raise TypeError(f"a device sends device messages, not {type(message).__name__}")
        if isinstance(message, Heartbeat) and not self.idle:
            return b""  # a frame already on its way proves the device alive; do not pile heartbeats up
        seq = self._next_seq
        self._next_seq = (seq + 1) % SEQ_MODULO
        frame = encode_frame(seq, message)
        if self.idle:
            self._in_flight = _InFlight(seq, message, frame, now)
            return frame
        self._queue.append((seq, message, frame))
        return b""

    def feed(self, data: bytes) -> None:
        """Bytes read from the host: ACKs and NAKs."""
        for item in self._decoder.feed(data):
            if isinstance(item, FrameError):
                self.link_errors += 1
                continue
            current = self._in_flight
            if current is None or item.seq != current.seq:
                continue  # late or misquoted: nothing of ours to act on
            if isinstance(item.message, Ack):
                self._in_flight = None
            elif isinstance(item.message, Nak):
                current.nak = True
            # A device message coming back (a loop, an echo) means nothing to the device.

    def due(self, now: float) -> list[bytes]:
        """Frames to write now: a retransmission (after a NAK or a timeout) and/or the next queued frame."""
        out: list[bytes] = []
        current = self._in_flight
        if current is not None and (current.nak or now - current.sent_at >= self._ack_timeout):
            if current.attempts > self._max_retries and not isinstance(current.message, Hello):
                self._undelivered.append(Undelivered(current.seq, current.message, current.attempts))
                self._in_flight = None
            else:
                current.attempts += 1
                current.sent_at = now
                current.nak = False
                out.append(current.frame)
        if self._in_flight is None and self._queue:
            seq, message, frame = self._queue.popleft()
            self._in_flight = _InFlight(seq, message, frame, now)
            out.append(frame)
        return out

    def deadline(self) -> float | None:
        """When `due` next has something to do (-inf: now); None when idle."""
        current = self._in_flight
        if current is None:
            return -math.inf if self._queue else None
        return -math.inf if current.nak else current.sent_at + self._ack_timeout

    def take_undelivered(self) -> list[Undelivered]:
        """Frames given up since the last call: the device reports these (the host sees a sequence jump)."""
        taken, self._undelivered = self._undelivered, []
        return taken
