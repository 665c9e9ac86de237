"""A simulated shoe or card scanner behind a kernel pseudo-terminal, with fault injection.

It deals a given shoe order (or a seeded shuffle) one card per `draw()`, speaking either protocol: the smart shoe's
framed protocol (with the device side of ACK/NAK and retransmission, heartbeats and the cut card) or the line
scanner's one line per card. Faults are injected on the wire: garbage, dropped, duplicated and corrupted frames,
delays, and unplugging the device for a while. The baud rate is emulated by the pty device.

The simulator runs its own thread (`start`), so that a host in the same process reads it through the real kernel pty
and pyserial, as it would read a device on a cable.
"""

from __future__ import annotations

import queue
import random
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields

from drivers.line_scanner.protocol import encode_line
from drivers.simulator.pty_device import PtyDevice
from drivers.smart_shoe.protocol import CardDrawn, CutCard, DeviceSession, Heartbeat, Hello
from studio.domain.cards import Card
from studio.domain.errors import ConfigError

PROTOCOLS = ("smart-shoe", "line")


@dataclass(frozen=True, slots=True)
class Faults:
    """Probabilities (0 to 1) per frame or line sent, and what an unplug does."""

    garbage: float = 0.0  # random bytes before it
    drop: float = 0.0  # lost on the wire
    duplicate: float = 0.0  # sent twice
    corrupt: float = 0.0  # one bit flipped (a bad checksum, or a malformed line)
    delay: float = 0.0  # up to this many seconds late
    unplug_after: int = 0  # unplug once after this many cards (0: never)
    unplug_seconds: float = 1.0

    @classmethod
    def parse(cls, text: str) -> Faults:
        """`garbage=0.05,drop=0.01,unplug_after=20` → Faults; a clear error for anything else."""
        known = {f.name: f.type for f in fields(cls)}
        values: dict[str, float | int] = {}
        for item in filter(None, (part.strip() for part in text.split(","))):
            name, _, value = item.partition("=")
            if name not in known:
                raise ConfigError(f"unknown fault {name!r} (expected: {', '.join(known)})")
            try:
                number = int(value) if known[name] == "int" else float(value)
            except ValueError:
                raise ConfigError(f"fault {name}: {value!r} is not a number") from None
            if number < 0 or (name in ("garbage", "drop", "duplicate", "corrupt") and number > 1):
                raise ConfigError(f"fault {name}: {value} is out of range")
            values[name] = number
        return cls(**values)  # type: ignore[arg-type]


class ShoeSimulator:
    def __init__(
        self,
        cards: Sequence[Card],
        protocol: str = "smart-shoe",
        *,
        device: PtyDevice | None = None,
        faults: Faults | None = None,
        seed: int = 0,
        cut_card_at: int | None = None,
        heartbeat_seconds: float = 0.5,
        monotonic: Callable[[], float] = time.monotonic,
        boot_id: int | None = None,
        position: int = 0,
    ) -> None:
        if protocol not in PROTOCOLS:
            raise ConfigError(f"unknown protocol {protocol!r} (expected one of: {', '.join(PROTOCOLS)})")
        self.cards = list(cards)
        self.protocol = protocol
        self.device = device or PtyDevice()
        self.faults = faults or Faults()
        self.cut_card_at = cut_card_at
        self.heartbeat_seconds = heartbeat_seconds
        self.position = position  # cards drawn so far: a shoe resumed after a restart goes on where it was
        # A fresh boot id at each power-up, as a real shoe's (a counter or a random number): the host then knows its
        # frame numbers start over.
        self.boot_id = random.SystemRandom().getrandbits(32) if boot_id is None else boot_id
        self._rng = random.Random(seed)
        self._monotonic = monotonic
        # A shoe never gives a card up: it retransmits until the host acknowledges (a real device would alarm).
        self._session = DeviceSession(max_retries=1_000_000)
        self._requests: queue.Queue[str] = queue.Queue()
        self._loads: queue.Queue[tuple[list[Card], int | None]] = queue.Queue()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._last_sent = 0.0
        self._unplugged_until: float | None = None
        self.drawn = threading.Semaphore(0)  # released once per card put on the wire

    # Public API: thread-safe requests to the device thread.

    def start(self) -> str:
        """Plug the device in, start its thread; return the path the host opens."""
        self.device.plug()
        if self.protocol == "smart-shoe":
            self._send(Hello(boot_id=self.boot_id))
        self._thread = threading.Thread(target=self._run, name="shoe-sim", daemon=True)
        self._thread.start()
        return self.device.path

    def draw(self) -> None:
        """The dealer draws the next card."""
        self._requests.put("draw")

    def unplug(self, seconds: float) -> None:
        self._requests.put(f"unplug {seconds}")

    def load(self, cards: Sequence[Card], cut_card_at: int | None) -> None:
        """A new shoe, shuffled and cut: the next draw is its first card."""
        self._loads.put((list(cards), cut_card_at))
        self._requests.put("load")

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self.device.close()

    @property
    def remaining(self) -> int:
        return len(self.cards) - self.position

    # The device thread.

    def _run(self) -> None:
        while not self._stop.is_set():
            now = self._monotonic()
            if self._unplugged_until is not None:
                if now < self._unplugged_until:
                    time.sleep(0.01)
                    continue
                self._unplugged_until = None
                self.device.plug()
            self._serve_requests()
            if self.protocol == "smart-shoe" and self.device.plugged:
                self._session.feed(self.device.read(0.005))
                for frame in self._session.due(self._monotonic()):
                    self._wire(frame)
                if self._monotonic() - self._last_sent > self.heartbeat_seconds and self._session.idle:
                    self._send(Heartbeat())
            else:
                time.sleep(0.005)

    def _serve_requests(self) -> None:
        while True:
            try:
                request = self._requests.get_nowait()
            except queue.Empty:
                return
            if request == "draw":
                self._draw()
            elif request == "load":
                self.cards, self.cut_card_at = self._loads.get_nowait()
                self.position = 0
            else:
                self._unplug(float(request.split()[1]))

    def _draw(self) -> None:
        if self.position >= len(self.cards):
            return
        if self.protocol == "smart-shoe" and self.position == self.cut_card_at:
            self._send(CutCard())
        card = self.cards[self.position]
        self.position += 1
        if self.protocol == "smart-shoe":
            self._send(CardDrawn(card))
        else:
            self._wire(encode_line(card))
        self.drawn.release()
        if self.faults.unplug_after and self.position == self.faults.unplug_after:
            self._unplug(self.faults.unplug_seconds)

    def _unplug(self, seconds: float) -> None:
        self.device.unplug()
        self._unplugged_until = self._monotonic() + seconds

    def _send(self, message: CardDrawn | CutCard | Heartbeat | Hello) -> None:
        self._wire(self._session.send(message, self._monotonic()))

    def _wire(self, frame: bytes) -> None:
        """Put bytes on the (faulty) wire."""
        if not frame or not self.device.plugged:
            return
        self._last_sent = self._monotonic()
        faults, rng = self.faults, self._rng
        if faults.delay:
            time.sleep(rng.uniform(0, faults.delay))
        if rng.random() < faults.drop:
            return
        if rng.random() < faults.corrupt:
            flipped = bytearray(frame)
            index = rng.randrange(1, max(2, len(frame) - 1))
            flipped[index] ^= 1 << rng.randrange(8)
            frame = bytes(flipped)
        if rng.random() < faults.garbage:
            self.device.write(bytes(rng.randrange(256) for _ in range(rng.randint(1, 12))))
        try:
            self.device.write(frame)
            if rng.random() < faults.duplicate:
                self.device.write(frame)
        except OSError:
            pass  # unplugged meanwhile: the bytes are lost, as on a real cable
