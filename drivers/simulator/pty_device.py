"""The device end of a kernel pseudo-terminal pair: what a real shoe or scanner would be on a serial cable.

The host opens `path` (or the stable `link` to it) with pyserial exactly as it would open /dev/ttyUSB0. Unplugging
closes the pty; plugging in again opens a new one and moves the link, as udev would for a device that comes back.
The baud rate can be emulated: bytes leave no faster than 10 bits each (8N1) at the configured rate.
"""

from __future__ import annotations

import os
import select
import time
import tty
from collections.abc import Callable
from pathlib import Path


class PtyDevice:
    def __init__(self, link: Path | None = None, baud: int | None = None, sleep: Callable[[float], None] = time.sleep):
        self.link = link
        self.baud = baud
        self._sleep = sleep
        self._master: int | None = None
        self._slave: int | None = None
        self._path: str | None = None

    @property
    def path(self) -> str:
        """Where the host opens the device: the stable link if there is one, else the pty's own path."""
        if self.link is not None:
            return str(self.link)
        if self._path is None:
            raise RuntimeError("the device is not plugged in")
        return self._path

    @property
    def plugged(self) -> bool:
        return self._master is not None

    def plug(self) -> None:
        if self.plugged:
            return
        master, slave = os.openpty()
        tty.setraw(master)
        tty.setraw(slave)  # no echo, no line discipline: bytes pass as they are
        self._master, self._slave, self._path = master, slave, os.ttyname(slave)
        if self.link is not None:
            temporary = self.link.with_name(self.link.name + ".new")
            temporary.unlink(missing_ok=True)
            temporary.symlink_to(self._path)
            temporary.replace(self.link)  # atomic: the host never sees the link missing or half made

    def unplug(self) -> None:
        """The cable is pulled: the host's next read fails."""
        for fd in (self._master, self._slave):
            if fd is not None:
                os.close(fd)
        self._master = self._slave = self._path = None

    def close(self) -> None:
        """The device is put away: unplugged, and its link removed (nothing is left behind in the folder)."""
        self.unplug()
        if self.link is not None:
            self.link.unlink(missing_ok=True)

    def write(self, data: bytes) -> None:
        if self._master is None:
            raise OSError("the device is unplugged")
        if self.baud:
            self._sleep(len(data) * 10 / self.baud)  # start bit, 8 data bits, stop bit
        view = memoryview(data)
        while view:
            written = os.write(self._master, view)
            view = view[written:]

    def read(self, timeout: float) -> bytes:
        """What the host wrote to the device, waiting up to `timeout` seconds; b"" if nothing came."""
        if self._master is None:
            return b""
        ready, _, _ = select.select([self._master], [], [], timeout)
        if not ready:
            return b""
        try:
            return os.read(self._master, 4096)
        except OSError:
            return b""
