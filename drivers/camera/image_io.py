"""Reading images and checking frames, so that no file or frame can crash or hang the recognizer.

Rules: a file is read whole only if it is not larger than `MAX_FILE_BYTES`; its pixel size is read from the header
(PNG, JPEG, GIF, BMP, WebP) before decoding, and an image of more than `MAX_PIXELS` pixels is refused rather than
decoded; a frame is 8-bit, grey (2-D) or BGR/BGRA (3-D), non-empty and within `MAX_PIXELS`. Anything else is an
`ImageError` naming the file or frame and the problem.
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import cast

import cv2
import numpy as np
import numpy.typing as npt

from drivers.camera.errors import ImageError

MAX_PIXELS = 40_000_000  # 8K UHD (33 Mpx) fits; a decompression bomb does not
MAX_FILE_BYTES = 100 * 1024 * 1024
IMAGE_SUFFIXES = frozenset({".jpg", ".jpeg", ".png", ".bmp", ".webp", ".tif", ".tiff"})

Image = npt.NDArray[np.uint8]
Mask = npt.NDArray[np.uint8]  # one channel, 8-bit


def u8(array: object) -> npt.NDArray[np.uint8]:
    """An OpenCV result known to be 8-bit, typed as such (OpenCV's stubs say only 'an array')."""
    return cast("npt.NDArray[np.uint8]", array)


def probe_size(data: bytes) -> tuple[int, int] | None:
    """(width, height) from the header of a PNG, JPEG, GIF, BMP or WebP file; None for other or truncated data."""
    try:
        if data.startswith(b"\x89PNG\r\n\x1a\n") and data[12:16] == b"IHDR":
            width, height = struct.unpack(">II", data[16:24])
            return int(width), int(height)
        if data[:6] in (b"GIF87a", b"GIF89a"):
            width, height = struct.unpack("<HH", data[6:10])
            return int(width), int(height)
        if data.startswith(b"BM"):
            width, height = struct.unpack("<ii", data[18:26])
            return abs(int(width)), abs(int(height))
        if data.startswith(b"RIFF") and data[8:12] == b"WEBP":
            return _webp_size(data)
        if data.startswith(b"\xff\xd8"):
            return _jpeg_size(data)
    except struct.error:
        return None
    return None


def _webp_size(data: bytes) -> tuple[int, int] | None:
    chunk = data[12:16]
    if chunk == b"VP8X":
        width = int.from_bytes(data[24:27], "little") + 1
        height = int.from_bytes(data[27:30], "little") + 1
        return width, height
    if chunk == b"VP8 ":
        width, height = struct.unpack("<HH", data[26:30])
        return int(width) & 0x3FFF, int(height) & 0x3FFF
    if chunk == b"VP8L":
        bits = int.from_bytes(data[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    return None


_SOF_MARKERS = {0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF}


def _jpeg_size(data: bytes) -> tuple[int, int] | None:
    index = 2
    while index + 9 < len(data):
        if data[index] != 0xFF:
            return None
        marker = data[index + 1]
        if marker == 0xFF:  # fill byte
            index += 1
            continue
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:  # markers without a length
            index += 2
            continue
        (length,) = struct.unpack(">H", data[index + 2 : index + 4])
        if marker in _SOF_MARKERS:
            height, width = struct.unpack(">HH", data[index + 5 : index + 9])
            return int(width), int(height)
        if length < 2:
            return None
        index += 2 + length
    return None


def decode_image(data: bytes, name: str = "image") -> Image:
    """A BGR 8-bit image from the bytes of an image file; `ImageError` if they are not a usable image."""
    if not data:
        raise ImageError(f"{name}: empty file, not an image")
    if len(data) > MAX_FILE_BYTES:
        raise ImageError(f"{name}: file of {len(data)} bytes is larger than {MAX_FILE_BYTES} bytes")
    size = probe_size(data)
    if size is not None and size[0] * size[1] > MAX_PIXELS:
        raise ImageError(f"{name}: image of {size[0]}x{size[1]} pixels is larger than {MAX_PIXELS} pixels")
    try:
        image = cv2.imdecode(np.frombuffer(data, dtype=np.uint8), cv2.IMREAD_COLOR)
    except cv2.error as error:
        raise ImageError(f"{name}: cannot decode the image ({_first_line(error)})") from None
    if image is None or image.size == 0:
        raise ImageError(f"{name}: not an image, or a corrupt one")
    return check_frame(image, name)


def load_image(path: Path | str) -> Image:
    """Read and decode an image file; `ImageError` (missing, a folder, unreadable, not an image, too large)."""
    path = Path(path)
    try:
        size = path.stat().st_size
        if not path.is_file():
            raise ImageError(f"{path}: not a file")
        if size > MAX_FILE_BYTES:
            raise ImageError(f"{path}: file of {size} bytes is larger than {MAX_FILE_BYTES} bytes")
        data = path.read_bytes()
    except FileNotFoundError:
        raise ImageError(f"{path}: no such file") from None
    except OSError as error:
        raise ImageError(f"{path}: cannot read ({error.strerror or error})") from None
    return decode_image(data, str(path))


def check_frame(frame: object, name: str = "frame") -> Image:
    """The frame as a contiguous BGR 8-bit image, or `ImageError` saying why it cannot be used."""
    if not isinstance(frame, np.ndarray):
        raise ImageError(f"{name}: not an image array but {type(frame).__name__}")
    if frame.dtype != np.uint8:
        raise ImageError(f"{name}: pixels of type {frame.dtype}, expected 8-bit (uint8)")
    if frame.size == 0 or frame.ndim not in (2, 3) or 0 in frame.shape:
        raise ImageError(f"{name}: empty image (shape {frame.shape})")
    height, width = frame.shape[:2]
    if height * width > MAX_PIXELS:
        raise ImageError(f"{name}: image of {width}x{height} pixels is larger than {MAX_PIXELS} pixels")
    if frame.ndim == 2:
        return np.ascontiguousarray(cv2.cvtColor(frame, cv2.COLOR_GRAY2BGR))
    channels = frame.shape[2]
    if channels == 3:
        return np.ascontiguousarray(frame)
    if channels == 4:
        return np.ascontiguousarray(cv2.cvtColor(frame, cv2.COLOR_BGRA2BGR))
    if channels == 1:
        return np.ascontiguousarray(cv2.cvtColor(frame[:, :, 0], cv2.COLOR_GRAY2BGR))
    raise ImageError(f"{name}: {channels} colour channels, expected 1, 3 or 4")


def _first_line(error: Exception) -> str:
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    return lines[-1] if lines else type(error).__name__
