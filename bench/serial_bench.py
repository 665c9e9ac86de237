"""Serial frame-to-card-event latency through a real kernel pty and pyserial, with the baud rate emulated.

Run as `.venv/bin/python bench/serial_bench.py [--frames 320]`; prints one JSON object. A device thread writes one
frame (smart shoe) or line (scanner) at a time, at the emulated rate; the host's card source yields a `DeviceReport`.
Overhead is the time from the frame's last byte reaching the kernel (after the emulated wire time, 10 bits per byte)
to the report in the host's hands. Target: overhead p99 <= 1 ms. The first 20 frames of each run are a warm-up, not
counted.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import threading
import time

from drivers.line_scanner.protocol import encode_line
from drivers.line_scanner.source import LineScannerSource
from drivers.serial_source import SerialSource
from drivers.simulator.pty_device import PtyDevice
from drivers.smart_shoe.protocol import encode_card_drawn
from drivers.smart_shoe.source import SmartShoeSource
from studio.simulation import seeded_shoe

FRAMES = 320
WARM_UP = 20  # the first frames start the worker threads and warm the caches; not counted
MAX_FRAMES = 364  # seven 52-card decks
TARGET_P99_MS = 1.0


def measure(protocol: str, baud: int, count: int = FRAMES) -> dict[str, float]:
    cards = seeded_shoe(1, random.Random(1)) * 7
    device = PtyDevice(baud=baud)
    device.plug()
    source: SerialSource = (
        SmartShoeSource("shoe", device.path, baud)
        if protocol == "smart-shoe"
        else LineScannerSource("scanner", device.path, baud)
    )
    frames = [encode_card_drawn(n, card) if protocol == "smart-shoe" else encode_line(card)
              for n, card in enumerate(cards[:count])]  # fmt: skip
    sent: list[float] = []
    ready = threading.Event()

    def device_thread() -> None:
        ready.wait()
        for frame in frames:
            time.sleep(0.004)  # cards are drawn one at a time
            device.read(0)  # take the host's ACKs, as a shoe does
            device.write(frame)  # sleeps the wire time, then hands the frame to the kernel at once
            sent.append(time.perf_counter())  # the last bit is on the wire now

    async def host() -> list[float]:
        await source.open()
        ready.set()
        received = []
        async for _ in source.reports():
            received.append(time.perf_counter())
            if len(received) == len(frames):
                break
        await source.close()
        return received

    thread = threading.Thread(target=device_thread)
    thread.start()
    received = asyncio.run(host())
    thread.join()
    device.unplug()
    timed = list(zip(received, sent, strict=True))[WARM_UP:]
    overhead = sorted((got - done) * 1000 for got, done in timed)
    return {
        "frames": len(overhead),
        "wire_ms": round(len(frames[0]) * 10 / baud * 1000, 3),
        "overhead_p50_ms": round(statistics.median(overhead), 3),
        "overhead_p99_ms": round(overhead[int(len(overhead) * 0.99) - 1], 3),
        "overhead_max_ms": round(overhead[-1], 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--frames", type=int, default=FRAMES, help=f"frames a run, warm-up too (default: {FRAMES})")
    args = parser.parse_args()
    if not WARM_UP < args.frames <= MAX_FRAMES:
        parser.error(f"--frames: more than {WARM_UP} (the warm-up) and at most {MAX_FRAMES}")
    report = {f"{protocol}@{baud}": measure(protocol, baud, args.frames)
              for protocol in ("smart-shoe", "line") for baud in (9600, 115200)}  # fmt: skip
    report["target_overhead_p99_ms"] = TARGET_P99_MS  # type: ignore[assignment]
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
