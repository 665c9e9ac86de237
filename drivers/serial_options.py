"""The options every serial card source takes from a table's `[[sources]]` entry, checked once, here."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from studio.domain.errors import ConfigError

MAX_HEARTBEAT = 3600.0  # seconds; NaN and infinity are no interval at all


@dataclass(frozen=True, slots=True)
class SerialOptions:
    url: str
    baudrate: int
    heartbeat_seconds: float


def serial_options(
    source_id: str, options: Mapping[str, Any], default_baud: int, extra: frozenset[str] = frozenset()
) -> SerialOptions:
    where = f"source {source_id!r}"
    unknown = sorted(set(options) - {"url", "baudrate", "heartbeat_seconds"} - extra)
    if unknown:
        raise ConfigError(f"{where}: unknown setting {', '.join(unknown)}")
    url = options.get("url")
    if not isinstance(url, str) or not url.strip():
        raise ConfigError(f"{where}: url is required (a device path such as /dev/ttyUSB0, or loop://, socket://...)")
    baud = options.get("baudrate", default_baud)
    if isinstance(baud, bool) or not isinstance(baud, int) or baud <= 0:
        raise ConfigError(f"{where}: baudrate must be a positive whole number, not {baud!r}")
    heartbeat = options.get("heartbeat_seconds", 1.0)
    if isinstance(heartbeat, bool) or not isinstance(heartbeat, (int, float)) or not 0 < heartbeat <= MAX_HEARTBEAT:
        raise ConfigError(
            f"{where}: heartbeat_seconds must be a positive number up to {MAX_HEARTBEAT}, not {heartbeat!r}"
        )
    return SerialOptions(url, baud, float(heartbeat))
