"""Rank and suit templates: what a deck's index glyphs look like, learned by enrollment and loaded by the recognizer.

A templates set keeps every enrolled glyph (not an average), so that a glyph is compared with each sample of each
rank and the best match per rank counts: a deck photographed under several lights and angles stays several samples.
It also keeps the colour (redness) of each suit's print, so that a red pip is never read as a black suit when the
colour is clear.

On disk it is one NumPy `.npz` archive (no pickled objects): `version`, the glyph canvases as 8-bit images, their
labels, the suits' redness and a free-text description. A folder given as TEMPLATES holds `templates.npz`.
"""

from __future__ import annotations

import io
import zipfile
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from tokenize import TokenError

import numpy as np
import numpy.typing as npt

from drivers.camera.errors import TemplatesError
from drivers.camera.glyphs import RANK_SHAPE, SUIT_SHAPE, Canvas, Layout, as_vector

VERSION = 1
FILE_NAME = "templates.npz"
MAX_FILE_BYTES = 50 * 1024 * 1024
# What reading a damaged archive raises, from zipfile, zlib and NumPy (which tokenizes each array's header), and what
# its arrays raise when they hold the wrong values (a version of infinity).
_DAMAGED = (
    OSError,
    ValueError,
    KeyError,
    TypeError,
    EOFError,
    OverflowError,
    zipfile.BadZipFile,
    zlib.error,
    TokenError,
)

RANK_CODES = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
SUIT_CODES = ("S", "H", "D", "C")


@dataclass(frozen=True, slots=True, eq=False)
class Templates:
    rank_glyphs: npt.NDArray[np.uint8]  # (n, *RANK_SHAPE), ink 0..255
    rank_labels: tuple[str, ...]
    suit_glyphs: npt.NDArray[np.uint8]  # (m, *SUIT_SHAPE)
    suit_labels: tuple[str, ...]
    suit_redness: dict[str, float]  # typical redness of each suit's print
    layout: Layout | None = None  # where the deck prints its index
    description: str = ""
    rank_vectors: npt.NDArray[np.float32] = field(init=False, repr=False)
    suit_vectors: npt.NDArray[np.float32] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if len(self.rank_glyphs) != len(self.rank_labels) or len(self.suit_glyphs) != len(self.suit_labels):
            raise TemplatesError("templates: as many labels as glyphs are needed")
        object.__setattr__(self, "rank_vectors", _vectors(self.rank_glyphs, RANK_SHAPE))
        object.__setattr__(self, "suit_vectors", _vectors(self.suit_glyphs, SUIT_SHAPE))

    @property
    def ranks(self) -> tuple[str, ...]:
        return tuple(rank for rank in RANK_CODES if rank in self.rank_labels)

    @property
    def suits(self) -> tuple[str, ...]:
        return tuple(suit for suit in SUIT_CODES if suit in self.suit_labels)

    @classmethod
    def from_samples(
        cls,
        ranks: Iterable[tuple[str, Canvas]],
        suits: Iterable[tuple[str, Canvas, float]],
        layout: Layout | None = None,
        description: str = "",
    ) -> Templates:
        rank_list = sorted(ranks, key=lambda sample: RANK_CODES.index(sample[0]))
        suit_list = sorted(suits, key=lambda sample: SUIT_CODES.index(sample[0]))
        redness: dict[str, list[float]] = {}
        for suit, _, red in suit_list:
            redness.setdefault(suit, []).append(red)
        return cls(
            _to_uint8([glyph for _, glyph in rank_list], RANK_SHAPE),
            tuple(rank for rank, _ in rank_list),
            _to_uint8([glyph for _, glyph, _ in suit_list], SUIT_SHAPE),
            tuple(suit for suit, _, _ in suit_list),
            {suit: float(np.median(values)) for suit, values in redness.items()},
            layout,
            description,
        )

    def save(self, path: Path | str) -> Path:
        """Write the templates to a file, or into a folder as `templates.npz`: a folder is an existing one or a path
        without a suffix (`deck/`, `deck`); `deck.npz` is a file."""
        target = Path(path)
        if target.is_dir() or not target.suffix:
            target.mkdir(parents=True, exist_ok=True)
            target = target / FILE_NAME
        target.parent.mkdir(parents=True, exist_ok=True)
        suits = sorted(self.suit_redness)
        buffer = io.BytesIO()
        np.savez_compressed(
            buffer,
            version=np.array(VERSION),
            rank_glyphs=self.rank_glyphs,
            rank_labels=np.array(self.rank_labels, dtype="<U2"),
            suit_glyphs=self.suit_glyphs,
            suit_labels=np.array(self.suit_labels, dtype="<U2"),
            redness_suits=np.array(suits, dtype="<U2"),
            redness_values=np.array([self.suit_redness[suit] for suit in suits], dtype=np.float32),
            layout=np.array([*self.layout.rank, *self.layout.suit] if self.layout else [], dtype=np.float64),
            description=np.array(self.description),
        )
        target.write_bytes(buffer.getvalue())
        return target

    @classmethod
    def load(cls, path: Path | str) -> Templates:
        """Read a templates file (or a folder holding `templates.npz`); `TemplatesError` names what is wrong."""
        source = Path(path)
        if source.is_dir():
            source = source / FILE_NAME
        try:
            size = source.stat().st_size
            if size > MAX_FILE_BYTES:
                raise TemplatesError(f"{source}: {size} bytes is too large for a templates file")
            data = source.read_bytes()
        except FileNotFoundError:
            raise TemplatesError(f"{source}: no such templates file") from None
        except OSError as error:
            raise TemplatesError(f"{source}: cannot read the templates ({error.strerror or error})") from None
        try:
            with np.load(io.BytesIO(data), allow_pickle=False) as archive:
                version = int(archive["version"])
                if version != VERSION:
                    raise TemplatesError(f"{source}: templates of version {version}, this driver reads {VERSION}")
                templates = cls(
                    _glyphs(archive["rank_glyphs"], RANK_SHAPE, source),
                    _labels(archive["rank_labels"], RANK_CODES, source),
                    _glyphs(archive["suit_glyphs"], SUIT_SHAPE, source),
                    _labels(archive["suit_labels"], SUIT_CODES, source),
                    {
                        str(suit): float(value)
                        for suit, value in zip(archive["redness_suits"], archive["redness_values"], strict=True)
                    },
                    _layout(archive["layout"], source),
                    str(archive["description"]),
                )
        except TemplatesError:
            raise
        except _DAMAGED as error:
            raise TemplatesError(f"{source}: not a templates file, or a corrupt one ({error})") from None
        except MemoryError:  # an array header may claim any size: NumPy allocates it before reading the data
            raise TemplatesError(f"{source}: not a templates file, or a corrupt one (an array too large)") from None
        if not templates.rank_labels:
            raise TemplatesError(f"{source}: holds no rank templates")
        return templates


def _vectors(glyphs: npt.NDArray[np.uint8], shape: tuple[int, int]) -> npt.NDArray[np.float32]:
    if len(glyphs) == 0:
        return np.zeros((0, shape[0] * shape[1]), dtype=np.float32)
    return np.stack([as_vector(glyph.astype(np.float32) / 255.0) for glyph in glyphs])


def _to_uint8(glyphs: Sequence[Canvas], shape: tuple[int, int]) -> npt.NDArray[np.uint8]:
    if not glyphs:
        return np.zeros((0, *shape), dtype=np.uint8)
    return np.stack([np.clip(np.rint(glyph * 255), 0, 255).astype(np.uint8) for glyph in glyphs])


def _glyphs(array: npt.NDArray[np.generic], shape: tuple[int, int], source: Path) -> npt.NDArray[np.uint8]:
    if array.dtype != np.uint8 or array.ndim != 3 or array.shape[1:] != shape:
        raise TemplatesError(f"{source}: glyphs of shape {array.shape} and type {array.dtype}, expected (n, {shape})")
    return array  # type: ignore[return-value]


def _labels(array: npt.NDArray[np.generic], allowed: tuple[str, ...], source: Path) -> tuple[str, ...]:
    labels = tuple(str(label) for label in array.tolist())
    unknown = sorted(set(labels) - set(allowed))
    if unknown:
        raise TemplatesError(f"{source}: unknown labels {', '.join(unknown)}")
    return labels


def _layout(array: npt.NDArray[np.generic], source: Path) -> Layout | None:
    values = [float(v) for v in np.asarray(array, dtype=np.float64).ravel()]
    if not values:
        return None
    if len(values) != 8 or not all(0.0 <= v <= 1.0 for v in values):
        raise TemplatesError(f"{source}: the index layout is not two boxes within the corner")
    return Layout((values[0], values[1], values[2], values[3]), (values[4], values[5], values[6], values[7]))
