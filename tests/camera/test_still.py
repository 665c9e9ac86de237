"""`StillTable`: a frame is read again only when its zones changed since the frame last read. Frames are held-out
roboflow webcam scenes at 1280 x 720, each frame with its own sensor noise and JPEG compression, as a camera films
cards lying still: a studio camera's stream for the still scenes (sigma 4, quality 80: `render.filmed`, below the
level in `bench/still_levels.py`), the least noisy one for the changed ones (a change must show without noise's
help)."""

from __future__ import annotations

from collections.abc import Sequence

import cv2
import numpy as np
import pytest

from drivers.camera.detect import Zone
from drivers.camera.image_io import load_image
from drivers.camera.recognize import CardRead
from drivers.camera.still import CHANGED, REREAD_EVERY, StillTable
from drivers.camera.training import split
from drivers.camera.training.compose import roboflow_pieces, scene
from drivers.camera.training.dataset import labels
from tests.camera.render import filmed, index_swapped

Scenes = list[tuple[np.ndarray, list[tuple[int, float, float, float]]]]  # frame, its indices: class, x, y, side
ZONES = (Zone("player", (60, 160, 540, 400)), Zone("banker", (680, 160, 540, 400)))  # the benchmark's zones


class Counting:
    """A reader of `zones` that keeps the frames it reads and reads one card, its box's x the count of frames read."""

    def __init__(self, zones: tuple[Zone, ...]) -> None:
        self.zones = zones
        self.frames: list[np.ndarray] = []

    def read_frame(self, frame: object, zones: Sequence[Zone] = ()) -> list[CardRead]:
        assert isinstance(frame, np.ndarray) and tuple(zones) == self.zones
        self.frames.append(frame)
        box = (len(self.frames), 0, 10, 10)
        quad = np.zeros((4, 2), dtype=np.float32)
        return [CardRead("A", "S", 0.9, 0.9, 0.9, box, quad, None)]


@pytest.fixture(scope="module")
def scenes() -> Scenes:
    """Three held-out webcam scenes at 1280 x 720 with their labelled indices (class, x, y, side)."""
    paths = sorted(path for path in split.read()["test"] if path.name.startswith("WIN_"))[:3]
    found = []
    for path in paths:
        frame = cv2.resize(load_image(path), (1280, 720), interpolation=cv2.INTER_CUBIC)
        found.append((frame, [(code, s.x, s.y, s.side) for code, s in labels(path, 1280, 720)]))
    return found


def table(zones: tuple[Zone, ...] = ZONES) -> tuple[StillTable, Counting]:
    reader = Counting(zones)
    return StillTable(reader, zones), reader


@pytest.mark.parametrize("zones", [ZONES, ()], ids=["zones", "anywhere"])
def test_a_still_scene_is_read_once_then_every_reread_every_frames(scenes: Scenes, zones: tuple[Zone, ...]) -> None:
    still, reader = table(zones)
    rng = np.random.default_rng(1)
    for frame, _ in scenes:
        takes = [filmed(frame, rng) for _ in range(5)]  # five frames' noise, in turn (each unlike the first)
        reads = [still.read_frame(takes[index % len(takes)]) for index in range(2 * REREAD_EVERY + 1)]
        # read at the scene's first frame (it changed), then again every REREAD_EVERY frames: the same card meanwhile
        assert [read[0].box[0] for read in reads] == [len(reader.frames) - 2] * REREAD_EVERY + [
            len(reader.frames) - 1] * REREAD_EVERY + [len(reader.frames)]  # fmt: skip
    assert still.frames_read_again == 3 * len(scenes) and len(reader.frames) == 9
    assert still.frames_still == 3 * 2 * (REREAD_EVERY - 1)


def test_a_corner_index_replaced_by_another_is_read_again(scenes: Scenes) -> None:
    """Every labelled index inside the zones, in turn, overwritten by the next index of its scene (scaled to it):
    the frame is read again each time."""
    rng = np.random.default_rng(2)
    swaps = 0
    for frame, indices in scenes:
        first, second = filmed(frame, rng, 2.0, 90), filmed(frame, rng, 2.0, 90)
        inside = [i for i in indices if any(z.box[0] <= i[1] < z.box[0] + z.box[2] and
                                            z.box[1] <= i[2] < z.box[1] + z.box[3] for z in ZONES)]  # fmt: skip
        for (_, x, y, side), (_, ox, oy, other_side) in zip(inside, inside[1:] + inside[:1], strict=True):
            changed = index_swapped(frame, (x, y, side), (ox, oy, other_side))
            if changed is None:
                continue
            still, reader = table()
            still.read_frame(first)
            still.read_frame(second)
            still.read_frame(filmed(changed, rng, 2.0, 90))
            assert len(reader.frames) == 2, (x, y)  # the still frame reused, the changed one read
            swaps += 1
    assert swaps >= 10


def test_a_small_index_of_another_card_in_a_composed_studio_scene_is_read_again() -> None:
    """Studio scenes composed from validation photos (`compose.scene`: indices of 24 to 72 pixels at 720 rows, any
    turn, 0 to 50 degrees off vertical), read anywhere: each index of 20 pixels or more overwritten by the next one
    of another card is seen, at the least noise."""
    paths = sorted(path for path in split.read()["validation"] if "roboflow" in str(path))[::8]
    pieces = roboflow_pieces(paths)
    rng = np.random.default_rng(4)
    swaps, smallest = 0, 10_000
    for _ in range(4):
        frame, indices = scene(pieces, rng, (1280, 720))
        first = filmed(frame, rng, 2.0, 90)
        for (code, at), (other_code, other) in zip(indices, indices[1:] + indices[:1], strict=True):
            changed = index_swapped(frame, (at.x, at.y, at.side), (other.x, other.y, other.side))
            if code == other_code or at.side < 20 or changed is None:
                continue
            still, reader = table(())
            still.read_frame(first)
            still.read_frame(filmed(changed, rng, 2.0, 90))
            assert len(reader.frames) == 2, (at, code, other_code)
            swaps += 1
            smallest = min(smallest, round(at.side))
    assert swaps >= 20 and smallest < 30


def test_a_change_outside_the_zones_and_their_margin_is_not_read_but_one_in_the_margin_is(scenes: Scenes) -> None:
    frame = scenes[0][0]
    still, reader = table((Zone("player", (400, 250, 400, 200)),))  # compared from (300, 200) to (900, 500)
    still.read_frame(frame)
    outside = frame.copy()
    outside[:180, :] = 255 - outside[:180, :]  # a hand over the top of the picture
    outside[:, 920:] = 0
    still.read_frame(outside)
    assert len(reader.frames) == 1
    margin = frame.copy()
    margin[210:230, 310:330] = 255 - margin[210:230, 310:330]  # in the margin, outside the zone itself
    still.read_frame(margin)
    assert len(reader.frames) == 2


def test_a_slow_drift_is_read_once_it_adds_up() -> None:
    """Each frame a little brighter than the one before: compared with the frame last read, not the one before."""
    still, reader = table()
    base = np.full((720, 1280, 3), 100, dtype=np.uint8)
    for step in range(CHANGED + 2):
        still.read_frame(base + np.uint8(step))
    assert len(reader.frames) == 2  # the first frame, and the one CHANGED + 1 levels brighter


def test_a_frame_of_another_size_or_pixel_type_is_read_again() -> None:
    still, reader = table(())
    still.read_frame(np.zeros((720, 1280, 3), dtype=np.uint8))
    still.read_frame(np.zeros((1080, 1920, 3), dtype=np.uint8))
    still.read_frame(np.zeros((1080, 1920), dtype=np.uint8))
    still.read_frame(np.zeros((1080, 1920), dtype=np.uint8))
    assert len(reader.frames) == 3


def test_zones_off_the_frame_or_smaller_than_a_cell_are_compared_too() -> None:
    zones = (Zone("off", (2000, 2000, 50, 50)), Zone("tiny", (10, 10, 3, 3)))
    still, reader = table(zones)
    frame = np.zeros((720, 1280, 3), dtype=np.uint8)
    still.read_frame(frame)
    still.read_frame(frame)
    assert len(reader.frames) == 1
    frame[11, 11] = 255  # one pixel in the tiny zone
    still.read_frame(frame)
    assert len(reader.frames) == 2


def test_the_reads_handed_out_are_copies() -> None:
    still, _ = table(())
    frame = np.zeros((720, 1280, 3), dtype=np.uint8)
    first = still.read_frame(frame)
    assert still.read_now
    first.clear()
    assert len(still.read_frame(frame)) == 1 and not still.read_now


def test_reread_every_one_reads_every_frame_and_zero_is_refused() -> None:
    reader = Counting(())
    still = StillTable(reader, (), reread_every=1)
    frame = np.zeros((720, 1280, 3), dtype=np.uint8)
    for _ in range(3):
        still.read_frame(frame)
        assert still.read_now
    assert len(reader.frames) == 3 and still.frames_still == 0
    with pytest.raises(ValueError, match="reread_every must be at least 1"):
        StillTable(reader, (), reread_every=0)
    with pytest.raises(ValueError, match="first_readings must be at least 1"):
        StillTable(reader, (), first_readings=0)


def test_after_a_change_the_first_readings_are_each_read() -> None:
    """As the camera's `stable_frames`: a card that came to rest is reported on that many readings of its own."""
    reader = Counting(())
    still = StillTable(reader, (), first_readings=3)
    empty, dealt = np.zeros((720, 1280, 3), dtype=np.uint8), np.full((720, 1280, 3), 200, dtype=np.uint8)
    read = []
    for frame in [empty] * 5 + [dealt] * 5 + [empty] * 2:
        still.read_frame(frame)
        read.append(still.read_now)
    assert read == [True] * 3 + [False] * 2 + [True] * 3 + [False] * 2 + [True] * 2
    assert still.frames_still == 4 and still.frames_read_again == 8
