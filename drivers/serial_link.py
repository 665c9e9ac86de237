"""A serial port opened with pyserial's `serial_for_url` (device paths, loop://, socket://, rfc2217://), read and
written from asyncio without blocking the loop: each blocking call runs in a worker thread. A port is closed only
between two of those calls (pyserial's read fails with a TypeError, not a SerialException, when its port is closed
under it), so a reader waiting when the link closes gets `SourceDisconnected`.
"""

from __future__ import annotations

import asyncio
from typing import Any

import serial

from studio.sources import SourceDisconnected, SourceUnavailable

READ_TIMEOUT = 0.1  # seconds a read waits for the first byte; a silent device is not an error, only a quiet one


class SerialLink:
    def __init__(self, url: str, baudrate: int, **settings: Any) -> None:
        self.url = url
        self.baudrate = baudrate
        self._settings = settings
        self._port: serial.Serial | None = None
        self._in_use = asyncio.Lock()  # held while a worker thread reads or writes the port

    @property
    def is_open(self) -> bool:
        return self._port is not None

    async def open(self) -> None:
        if self._port is not None:
            return
        try:
            self._port = await asyncio.to_thread(
                serial.serial_for_url, self.url, baudrate=self.baudrate, timeout=READ_TIMEOUT, **self._settings
            )
        except (serial.SerialException, OSError, ValueError) as error:
            raise SourceUnavailable(f"cannot open {self.url}: {error}") from None

    async def close(self) -> None:
        port, self._port = self._port, None
        if port is not None:
            async with self._in_use:  # a read under way ends within READ_TIMEOUT
                await asyncio.to_thread(port.close)

    def _read_blocking(self, port: serial.Serial) -> bytes:
        first = port.read(1)  # returns at the first byte, or empty after READ_TIMEOUT
        waiting = port.in_waiting if first else 0
        return first + port.read(waiting) if waiting else first

    async def read(self) -> bytes:
        """Whatever bytes arrived (possibly none, after a short wait); `SourceDisconnected` if the port failed."""
        async with self._in_use:
            port = self._require()
            try:
                return await asyncio.to_thread(self._read_blocking, port)
            except (serial.SerialException, OSError) as error:
                raise SourceDisconnected(f"{self.url}: {error}") from None

    async def write(self, data: bytes) -> None:
        if not data:
            return
        async with self._in_use:
            port = self._require()
            try:
                await asyncio.to_thread(port.write, data)
            except (serial.SerialException, OSError) as error:
                raise SourceDisconnected(f"{self.url}: {error}") from None

    def _require(self) -> serial.Serial:
        if self._port is None:
            raise SourceDisconnected(f"{self.url}: the port is closed")
        return self._port
