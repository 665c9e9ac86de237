"""Fuzzing what the camera driver reads from files: images (any bytes, damaged images, lying headers), frames (any
array), and templates files (damaged archives, archives of the wrong arrays). Each gives a usable result or the
driver's documented error (`ImageError`, `TemplatesError`) naming the file, never another exception.
"""

from __future__ import annotations

import io
import struct
import zipfile
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
from hypothesis import HealthCheck, example, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from drivers.camera.errors import ImageError, TemplatesError
from drivers.camera.image_io import MAX_PIXELS, check_frame, decode_image, load_image, probe_size
from drivers.camera.source import DEFAULT_TEMPLATES
from drivers.camera.templates import Templates
from tests.fuzz.support import fuzz

SMALL = np.full((6, 9, 3), (30, 120, 220), dtype=np.uint8)
ENCODED = {ext: cv2.imencode(ext, SMALL)[1].tobytes() for ext in (".png", ".jpg", ".bmp", ".webp", ".tiff")}
TEMPLATES_BYTES = DEFAULT_TEMPLATES.read_bytes()


@dataclass(frozen=True)
class Damaged:
    """A file's bytes with a few overwritten, and perhaps cut short; shown as the damage, not as the whole file."""

    name: str
    writes: tuple[tuple[int, int], ...]
    cut: int | None

    def data(self, original: bytes) -> bytes:
        out = bytearray(original)
        for position, value in self.writes:
            out[position] = value
        return bytes(out[: self.cut])


def damaged(name: str, data: bytes) -> st.SearchStrategy[Damaged]:
    writes = st.lists(st.tuples(st.integers(0, len(data) - 1), st.integers(0, 255)), min_size=1, max_size=4)
    return st.builds(Damaged, st.just(name), writes.map(tuple), st.none() | st.integers(1, len(data)))


def png_claiming(width: int, height: int) -> bytes:
    png = bytearray(ENCODED[".png"])
    png[16:24] = struct.pack(">II", width, height)
    return bytes(png)


images = (
    st.sampled_from(sorted(ENCODED))
    .flatmap(lambda ext: damaged(ext, ENCODED[ext]))
    .map(lambda damage: damage.data(ENCODED[damage.name]))
)


def check_image(image: np.ndarray) -> None:
    assert image.dtype == np.uint8 and image.ndim == 3 and image.shape[2] == 3
    assert 0 < image.shape[0] * image.shape[1] <= MAX_PIXELS


@fuzz(300)
@given(st.binary(max_size=200) | images | st.builds(png_claiming, st.integers(0, 2**32 - 1), st.integers(0, 2**32 - 1)))
@example(png_claiming(100_000, 100_000)).via("a decompression bomb's header")
@example(b"\xff\xd8\xff\xc0\x00\x02").via("a JPEG cut inside its frame header")
def test_any_bytes_decode_to_an_image_or_an_image_error(data: bytes) -> None:
    size = probe_size(data)
    assert size is None or (len(size) == 2 and min(size) >= 0)
    try:
        image = decode_image(data, "upload.png")
    except ImageError as error:
        assert str(error).startswith("upload.png: ")
    else:
        check_image(image)


@fuzz(200, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(images)
def test_a_damaged_image_file_loads_or_names_itself(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "photo.png"
    path.write_bytes(data)
    try:
        check_image(load_image(path))
    except ImageError as error:
        assert str(error).startswith(str(path))


frames = hnp.arrays(
    dtype=st.sampled_from([np.uint8, np.int16, np.float32, np.bool_]),
    shape=hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=5),
)


@fuzz(300)
@given(frames)
@example(np.zeros((4, 4, 2), dtype=np.uint8)).via("two colour channels")
def test_any_array_is_a_frame_or_an_image_error(frame: np.ndarray) -> None:
    try:
        image = check_frame(frame, "camera-7")
    except ImageError as error:
        assert str(error).startswith("camera-7: ")
    else:
        check_image(image)


def archive(**arrays: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **arrays)  # type: ignore[arg-type]
    return buffer.getvalue()


def archive_with_header(header: bytes) -> bytes:
    """An archive whose glyph array has this header (NumPy's format 1.0: a Python dict literal), and 16 data bytes."""
    header += b" " * (63 - (10 + len(header)) % 64) + b"\n"
    glyphs = b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header + bytes(16)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zipped:
        zipped.writestr("version.npy", archive_member(np.array(1)))
        zipped.writestr("rank_glyphs.npy", glyphs)
    return buffer.getvalue()


def archive_member(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array)
    return buffer.getvalue()


MEMBERS = ("version", "rank_glyphs", "rank_labels", "suit_glyphs", "suit_labels", "redness_suits", "redness_values",
           "layout", "description")  # fmt: skip
any_array: st.SearchStrategy[np.ndarray] = hnp.arrays(
    st.sampled_from([np.dtype(np.uint8), np.dtype(np.float64), np.dtype("<U2")]),
    hnp.array_shapes(min_dims=0, max_dims=3),
)
members = st.fixed_dictionaries({}, optional=dict.fromkeys(MEMBERS, any_array))


@fuzz(150, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(
    damaged("templates.npz", TEMPLATES_BYTES) | members.map(lambda arrays: archive(**arrays)) | st.binary(max_size=99)
)
@example(archive(version=np.array(1))).via("an archive holding only a version")
@example(archive(version=np.array(np.inf))).via("a version of infinity")
@example(Damaged("templates.npz", ((200, 0), (201, 0), (202, 0)), None)).via("damage inside a compressed member")
@example(archive_with_header(b"{'descr': '<f8', 'fortran_order': False, 'shape': (10**15,), }")).via("petabytes")
@example(archive_with_header(b"{'descr': '|u1', 'fortran_order': False, 'shape': (473, 32'sh, }")).via("a cut header")
def test_any_templates_file_loads_or_names_itself(tmp_path: Path, file: bytes | Damaged) -> None:
    path = tmp_path / "deck.npz"
    path.write_bytes(file.data(TEMPLATES_BYTES) if isinstance(file, Damaged) else file)
    try:
        templates = Templates.load(path)
    except TemplatesError as error:
        assert str(error).startswith(str(path))
    else:
        assert templates.rank_labels and len(templates.rank_glyphs) == len(templates.rank_labels)
