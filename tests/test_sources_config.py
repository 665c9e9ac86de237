"""Card sources named in a table's configuration: checked at start, with errors that name the file, key and problem."""

from __future__ import annotations

from pathlib import Path

import pytest

from drivers.camera.source import CameraSource
from drivers.memory_source import MemorySource
from drivers.registry import create_source
from drivers.smart_shoe.source import SmartShoeSource
from studio.clock import SystemClock
from studio.domain.errors import ConfigError
from studio.settings import config_dir, load_table_config

CLOCK = SystemClock()


def table_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "t9.toml"
    path.write_text(text)
    return path


def test_the_example_two_source_table_loads() -> None:
    table = load_table_config(config_dir() / "tables" / "example-shoe-and-camera.toml")
    assert table.table_id == "T7"
    assert [(s.source_id, s.driver) for s in table.sources] == [("shoe-7", "smart_shoe"), ("camera-7", "camera")]
    assert table.reconcile_window == 2.0
    shoe = create_source(table.sources[0].source_id, table.sources[0].driver, table.sources[0].options, CLOCK)
    assert isinstance(shoe, SmartShoeSource) and shoe.heartbeat_seconds == 1.0


def test_registry_builds_by_name_and_refuses_unknown_drivers() -> None:
    assert isinstance(create_source("m", "memory", {}, CLOCK), MemorySource)
    with pytest.raises(ConfigError, match="unknown driver 'telepathy'"):
        create_source("m", "telepathy", {}, CLOCK)
    with pytest.raises(ConfigError, match="source 'm': unknown setting colour"):
        create_source("m", "memory", {"colour": "red"}, CLOCK)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[[sources]]\ndriver = "memory"\n', "sources[0].id: required"),
        ('[[sources]]\nid = "a"\n', "sources[0].driver: required"),
        ('[[sources]]\nid = "a"\ndriver = "memory"\n[[sources]]\nid = "a"\ndriver = "memory"\n', "ids must differ"),
        ("sources = 3\n", "expected [[sources]] entries"),
        ("[reconcile]\nwindow_seconds = -1\n", "reconcile.window_seconds: expected a positive number"),
        ("[procedure]\nburn_after_shuffle = -2\n", "procedure.burn_after_shuffle: expected a whole number"),
        ("[procedure]\nallow_early_close = 1\n", "procedure.allow_early_close: expected true or false"),
        ("[procedure]\nshuffle_twice = true\n", "procedure: unknown setting shuffle_twice"),
    ],
)
def test_bad_table_files_name_the_file_and_key(tmp_path: Path, text: str, message: str) -> None:
    path = table_file(tmp_path, text)
    with pytest.raises(ConfigError) as raised:
        load_table_config(path)
    assert str(raised.value).startswith(str(path)) and message in str(raised.value)


def test_the_camera_is_configured_by_name_with_zones() -> None:
    zones = [{"name": "player", "box": [0, 0, 640, 720]}, {"name": "banker", "box": [640, 0, 640, 720]}]
    camera = create_source("camera-7", "camera", {"url": 0, "stable_frames": 4, "zones": zones}, CLOCK)
    assert isinstance(camera, CameraSource)
    assert isinstance(create_source("camera-7", "camera", {"url": 0, "reread_every": 1}, CLOCK), CameraSource)
    for options, message in [
        ({}, "url is required"),
        ({"url": 0, "stable_frames": 0}, "stable_frames must be a number from 1 to 100"),
        ({"url": 0, "reread_every": 0}, "reread_every must be a number from 1 to 250"),
        ({"url": 0, "reread_every": 2.5}, "reread_every must be a whole number from 1 to 250"),
        ({"url": 0, "stable_frames": 3.0}, "stable_frames must be a whole number from 1 to 100"),
        ({"url": 0, "zones": [{"name": "p", "box": [1, 2, 3]}]}, r"zones\[0\] must be"),
        ({"url": 0, "focus": "auto"}, "unknown setting focus"),
    ]:
        with pytest.raises(ConfigError, match=message):
            create_source("camera-7", "camera", options, CLOCK)
