"""Drivers chosen by name in a table's configuration, imported only when a table uses them.

A driver class provides `from_options(source_id, options, clock) -> CardSource`, which checks its own options and
raises `ConfigError` naming the bad key. A driver whose library is missing fails here, at start, with a clear error.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

from studio.domain.errors import ConfigError
from studio.ports import Clock
from studio.sources import CardSource, SourceUnavailable

DRIVERS: dict[str, tuple[str, str]] = {
    "smart_shoe": ("drivers.smart_shoe.source", "SmartShoeSource"),
    "line_scanner": ("drivers.line_scanner.source", "LineScannerSource"),
    "camera": ("drivers.camera.source", "CameraSource"),
    "memory": ("drivers.memory_source", "MemorySource"),
}


def create_source(source_id: str, driver: str, options: Mapping[str, Any], clock: Clock) -> CardSource:
    try:
        module_name, class_name = DRIVERS[driver]
    except KeyError:
        raise ConfigError(f"unknown driver {driver!r} (expected one of: {', '.join(DRIVERS)})") from None
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise SourceUnavailable(f"driver {driver!r} cannot load: {error} (is its package installed?)") from None
    source: CardSource = getattr(module, class_name).from_options(source_id, options, clock)
    return source
