"""Bad input never crashes or hangs the camera driver: a clear `ImageError`, or simply no cards."""

from __future__ import annotations

import random
import struct
import zlib
from pathlib import Path

import cv2
import numpy as np
import pytest

from drivers.camera.errors import ImageError
from drivers.camera.image_io import MAX_PIXELS, check_frame, decode_image, load_image, probe_size
from drivers.camera.recognize import Recognizer
from drivers.camera.templates import Templates


def png_header(width: int, height: int) -> bytes:
    """A PNG that claims a size in its header and holds a few bytes of nothing."""
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    chunk = b"IHDR" + ihdr
    return b"\x89PNG\r\n\x1a\n" + struct.pack(">I", len(ihdr)) + chunk + struct.pack(">I", zlib.crc32(chunk))


@pytest.fixture(scope="module")
def recognizer(synthetic_templates: Path) -> Recognizer:
    return Recognizer(Templates.load(synthetic_templates))


def test_the_size_is_read_from_the_header_of_common_formats() -> None:
    image = np.zeros((37, 53, 3), dtype=np.uint8)
    for suffix in (".png", ".jpg", ".bmp", ".webp"):
        ok, data = cv2.imencode(suffix, image)
        assert ok
        assert probe_size(data.tobytes()) == (53, 37), suffix
    assert probe_size(b"GIF89a" + struct.pack("<HH", 53, 37)) == (53, 37)
    assert probe_size(b"not an image at all") is None
    assert probe_size(b"\xff\xd8\xff") is None  # a JPEG cut short


def test_random_bytes_are_not_an_image() -> None:
    rng = random.Random(7)
    for size in (1, 10, 100, 5000):
        with pytest.raises(ImageError, match="not an image"):
            decode_image(rng.randbytes(size), "noise.bin")


def test_corrupt_and_truncated_files_are_clean_errors(tmp_path: Path) -> None:
    ok, jpeg = cv2.imencode(".jpg", np.full((64, 64, 3), 200, dtype=np.uint8))
    assert ok
    cases = {
        "empty.jpg": b"",
        "text.jpg": b"this is not a photo\n",
        "header-only.png": png_header(64, 64),
        "cut.jpg": jpeg.tobytes()[:20],
    }
    for name, data in cases.items():
        path = tmp_path / name
        path.write_bytes(data)
        with pytest.raises(ImageError) as caught:
            load_image(path)
        message = str(caught.value)
        assert name in message and "\n" not in message, message


def test_a_decompression_bomb_is_refused_before_decoding(tmp_path: Path) -> None:
    path = tmp_path / "bomb.png"
    path.write_bytes(png_header(100_000, 100_000))
    with pytest.raises(ImageError, match="larger than"):
        load_image(path)


def test_missing_files_and_folders_are_clean_errors(tmp_path: Path) -> None:
    with pytest.raises(ImageError, match="no such file"):
        load_image(tmp_path / "absent.png")
    with pytest.raises(ImageError, match="not a file"):
        load_image(tmp_path)


def test_frames_of_the_wrong_kind_are_refused() -> None:
    with pytest.raises(ImageError, match="uint16"):
        check_frame(np.zeros((10, 10, 3), dtype=np.uint16))
    with pytest.raises(ImageError, match="float"):
        check_frame(np.zeros((10, 10, 3), dtype=np.float32))
    with pytest.raises(ImageError, match="empty"):
        check_frame(np.zeros((0, 10, 3), dtype=np.uint8))
    with pytest.raises(ImageError, match="channels"):
        check_frame(np.zeros((10, 10, 2), dtype=np.uint8))
    with pytest.raises(ImageError, match="not an image array"):
        check_frame(b"\x00" * 300)
    with pytest.raises(ImageError, match="not an image array"):
        check_frame(None)
    # a frame claiming to be enormous, without the memory behind it
    huge = np.lib.stride_tricks.as_strided(np.zeros(3, dtype=np.uint8), shape=(9000, 9000, 3), strides=(0, 0, 1))
    assert huge.shape[0] * huge.shape[1] > MAX_PIXELS
    with pytest.raises(ImageError, match="larger than"):
        check_frame(huge)


def test_grey_and_transparent_frames_become_colour() -> None:
    assert check_frame(np.zeros((5, 6), dtype=np.uint8)).shape == (5, 6, 3)
    assert check_frame(np.zeros((5, 6, 1), dtype=np.uint8)).shape == (5, 6, 3)
    assert check_frame(np.zeros((5, 6, 4), dtype=np.uint8)).shape == (5, 6, 3)


@pytest.mark.parametrize(
    "frame",
    [
        np.zeros((1, 1, 3), dtype=np.uint8),
        np.zeros((720, 1280, 3), dtype=np.uint8),
        np.full((720, 1280, 3), 255, dtype=np.uint8),
        np.full((3, 4000, 3), 255, dtype=np.uint8),
        np.random.default_rng(3).integers(0, 256, (480, 640, 3), dtype=np.uint8),
        np.zeros((4000, 6000, 3), dtype=np.uint8),  # large, but allowed: nothing in it
    ],
    ids=["1x1", "black", "white", "sliver", "noise", "large-black"],
)
def test_frames_without_cards_give_no_cards(recognizer: Recognizer, frame: np.ndarray) -> None:
    assert recognizer.read_frame(frame) == []


def test_a_bad_frame_given_to_the_recognizer_is_a_clean_error(recognizer: Recognizer) -> None:
    with pytest.raises(ImageError):
        recognizer.read_frame(np.zeros((10, 10, 3), dtype=np.int64))
    with pytest.raises(ImageError):
        recognizer.read_frame("frame.png")
