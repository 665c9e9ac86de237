"""A camera's options in a table's `[[sources]]` entry, checked at start with errors naming the key."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from drivers.camera.detect import Zone
from studio.domain.errors import ConfigError

KEYS = {"url", "templates", "zones", "stable_frames", "min_confidence", "evidence_dir", "read_timeout", "reread_every"}


def camera_options(source_id: str, options: Mapping[str, Any]) -> dict[str, Any]:
    """Keyword arguments for `CameraSource` (the input under "input")."""
    where = f"source {source_id!r}"
    unknown = sorted(set(options) - KEYS)
    if unknown:
        raise ConfigError(f"{where}: unknown setting {', '.join(unknown)}")
    url = options.get("url")
    if isinstance(url, bool) or not isinstance(url, (str, int)) or (isinstance(url, str) and not url.strip()):
        raise ConfigError(f"{where}: url is required: a device index (0), a video file, an RTSP/HTTP URL or a folder")
    kwargs: dict[str, Any] = {"input": url}
    for key, kind, low, high in (("stable_frames", int, 1, 100), ("min_confidence", float, 0.0, 1.0),
                                 ("read_timeout", float, 0.01, 600.0), ("reread_every", int, 1, 250)):  # fmt: skip
        if key in options:
            value = options[key]
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
                raise ConfigError(f"{where}: {key} must be a number from {low} to {high}, not {value!r}")
            if kind is int and not isinstance(value, int):  # 2.5 frames is a typing slip, not 2 frames
                raise ConfigError(f"{where}: {key} must be a whole number from {low} to {high}, not {value!r}")
            kwargs[key] = kind(value)
    for key in ("templates", "evidence_dir"):
        if key in options:
            if not isinstance(options[key], str) or not options[key].strip():
                raise ConfigError(f"{where}: {key} must be a path")
            kwargs[key] = options[key]
    zones = options.get("zones", [])
    if not isinstance(zones, list):
        raise ConfigError(f'{where}: zones must be a list such as [{{ name = "player", box = [x, y, w, h] }}]')
    parsed = []
    for index, zone in enumerate(zones):
        box = zone.get("box") if isinstance(zone, Mapping) else None
        if not isinstance(zone, Mapping) or not isinstance(zone.get("name"), str) or not (
            isinstance(box, list) and len(box) == 4 and all(type(v) is int and v >= 0 for v in box)):  # fmt: skip
            raise ConfigError(f'{where}: zones[{index}] must be {{ name = "...", box = [x, y, w, h] }}')
        parsed.append(Zone(zone["name"], (box[0], box[1], box[2], box[3])))
    kwargs["zones"] = tuple(parsed)
    return kwargs
