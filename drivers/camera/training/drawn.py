"""Drawn cards: card faces drawn in many fonts and suit shapes, with exactly known index squares (training only).

The real photos show one webcam deck and a few phone decks; a deck the network has never seen prints its ranks in
another font and its suits in other shapes (a spade's point, a club's three round lobes), which is where the
network's confident errors on an unseen deck lie (an ace of spades read AC, a 5C read 3C: docs/camera.md). Drawn
cards add decks without number: each card is drawn on its own, with

- the rank in one of the studio's Debian fonts (`FONTS`, each checked by SHA-256 like the photos of `split.csv`),
  drawn by `font_glyph`, stretched or squeezed a little, bold or not as the font is;
- the suit as a shape of its own proportions (`suit_mask`: the lobes' size and spacing, the point, the stem's flare,
  the diamond's curved sides), under the rank at a random gap and size;
- red or black ink (now and then a pale pink red or a dark grey black) on off-white card stock, the index in both
  printed corners (the second half a turn round), pips or a court frame in the middle (things an index is not).

A drawn card is a `compose.Piece`: the scenes lay it among the real photos' pieces and it goes through the same
camera, glare, blur and noise; its index squares are those of the labels (1.3 times the longer side of the index's
box, `dataset.labels`). The test photos are never touched: drawn cards only add training data. Everything draws from
the generator it is given: one seed, one set of cards. Drawing the glyphs needs Pillow (the `train` extra);
`drawn_card` takes any glyph function, so its layout is tested with OpenCV's own fonts.
"""

from __future__ import annotations

import functools
import hashlib
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from drivers.camera.training.compose import Piece
from drivers.camera.training.dataset import CODES

U8 = npt.NDArray[np.uint8]
Glyph = Callable[[str, int], U8]  # (text, height in pixels) -> its ink as a mask (0 to 255), cropped to the ink

FONT_DIR = Path("/usr/share/fonts/truetype")
# The rank fonts (Debian packages fonts-dejavu-core 2.37, fonts-dejavu-extra 2.37 for the condensed ones,
# fonts-liberation2 2.1.5, fonts-freefont-ttf 20120503; `scripts/train-camera` installs them): sans, serif, condensed
# and monospaced, regular and bold.
FONTS = {
    "dejavu/DejaVuSans.ttf": "abdc775b21b1bc470d50c97e790d276f2054b7504e56e5bd3e64f48d68582322",
    "dejavu/DejaVuSans-Bold.ttf": "0d977336a6d5fba34eab8e3199eb218327161b5143749f802982c2bc34df0c96",
    "dejavu/DejaVuSansCondensed-Bold.ttf": "6d2f2481e2aae944e8411cc5be515c69503ff7f5db52f2c67bcbe5d4de6bec13",
    "dejavu/DejaVuSerif.ttf": "13e61509f5c81d7c3132810f4f903e3523df89c802bf6e0674621e8f659cdfe1",
    "dejavu/DejaVuSerif-Bold.ttf": "e2fd85eba2de65ac270d1cdb1685e252eb827f600850cf62af2d20c41b22e945",
    "dejavu/DejaVuSerifCondensed-Bold.ttf": "9432825f095d7bdc4fb445d60b7a91f326e212d041f88cf0c651801f6b7f5668",
    "dejavu/DejaVuSansMono-Bold.ttf": "2964f6dac8e6e9d71613928340f17bf868e9ea51692cca333c79e74962f02233",
    "liberation2/LiberationSans-Regular.ttf": "8d91388f1d3604b3b8ae0e3ee2d140e50cd6122f9214514f4aca772540a4076d",
    "liberation2/LiberationSans-Bold.ttf": "ba0e0dc3f7aca5b0afbc31e800531ee43be3aa79ae35b2ef1f6470a9547765c4",
    "liberation2/LiberationSerif-Regular.ttf": "29d12439831b7f59194efec85872f24f54eff05738933f9a860220d2abff88ba",
    "liberation2/LiberationSerif-Bold.ttf": "446a4421f297698427170fd7db20e59169a4188baaaf940e9bea58af6341a723",
    "liberation2/LiberationMono-Bold.ttf": "29534b0aad22fa386843365da6f04102df8d6a076e06a2a5ce270f83dd1bf351",
    "freefont/FreeSans.ttf": "0b602f2825b30f9faa772c2ca25b1ce05b6255c9bf02dd8ca088ae51f9f737bb",
    "freefont/FreeSansBold.ttf": "e8b93173d6d8214fb74a068663d3721fdca612bbf3f98973dddb7067b131a0cf",
    "freefont/FreeSerif.ttf": "12ee050384c99c97a6873708a3aebde3d795de8d8ed069b1a0e3274ab3e5be03",
    "freefont/FreeSerifBold.ttf": "12bd953ceb1fa8c7d7386c3d026bd3b004bf07640d8603cc803db7ceb7d9fb99",
}
HEIGHT = 280  # a drawn card's height in pixels (compose.py scales it to a studio's index sizes)
ASPECT = 63 / 88  # a poker-size card's width over its height
SUPERSAMPLE = 4  # suit shapes are drawn this many times larger, then shrunk: smooth edges


def font_glyphs(root: Path = FONT_DIR) -> list[Glyph]:
    """A glyph function per font of `FONTS`, each file checked by its SHA-256 (training refuses another file)."""
    glyphs: list[Glyph] = []
    for name, digest in FONTS.items():
        path = root / name
        if not path.is_file():
            raise FileNotFoundError(f"{path}: missing (scripts/train-camera installs the fonts)")
        if hashlib.sha256(path.read_bytes()).hexdigest() != digest:
            raise ValueError(f"{path}: not the font the drawn cards are made with (SHA-256 differs)")

        def glyph(text: str, height: int, path: Path = path) -> U8:
            from PIL import Image, ImageDraw  # noqa: PLC0415 - the `train` extra only, not the studio's

            font = _font(path, 2 * height)
            left, top, right, bottom = font.getbbox(text)
            image = Image.new("L", (right - left + 4, bottom - top + 4), 0)
            ImageDraw.Draw(image).text((2 - left, 2 - top), text, fill=255, font=font)
            return _scaled(_cropped(np.asarray(image, dtype=np.uint8)), height)

        glyphs.append(glyph)
    return glyphs


@functools.cache
def _font(path: Path, size: int) -> Any:
    """A font file loaded once per size (every drawn card asks for its glyphs at the same size)."""
    from PIL import ImageFont  # noqa: PLC0415 - the `train` extra only, not the studio's

    return ImageFont.truetype(str(path), size=size)


def _cropped(mask: U8) -> U8:
    ys, xs = np.nonzero(mask > 40)
    if len(xs) == 0:
        raise ValueError("an empty glyph")
    return mask[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1]


def _scaled(mask: U8, height: int, stretch: float = 1.0) -> U8:
    h, w = mask.shape
    size = (max(1, round(w * height / h * stretch)), height)
    return np.asarray(cv2.resize(mask, size, interpolation=cv2.INTER_AREA), dtype=np.uint8)


def _heart(rng: np.random.Generator, points: int = 72) -> npt.NDArray[np.float64]:
    """A heart's outline in a unit box, point down; its lobes' fullness drawn from `rng`."""
    fullness = float(rng.uniform(0.0, 1.0))
    t = np.linspace(0, 2 * math.pi, points, endpoint=False)
    x = 16 * np.sin(t) ** 3
    y = -(13 * np.cos(t) - (5 - 2 * fullness) * np.cos(2 * t) - 2 * np.cos(3 * t) - np.cos(4 * t))
    outline = np.stack([x, y], axis=1)
    outline -= outline.min(axis=0)
    return np.asarray(outline / outline.max(axis=0), dtype=np.float64)


def _stem(size: int, rng: np.random.Generator) -> npt.NDArray[np.int32]:
    """A stem under a spade or a club: narrow at the top, flared at the foot."""
    top, foot = rng.uniform(0.04, 0.09), rng.uniform(0.16, 0.3)
    start = rng.uniform(0.55, 0.7)
    return (np.array([[0.5 - top, start], [0.5 + top, start], [0.5 + foot, 1.0], [0.5 - foot, 1.0]]) * size).astype(
        np.int32
    )


def suit_mask(suit: str, height: int, rng: np.random.Generator) -> U8:
    """The ink of one suit sign ("C", "D", "H" or "S") `height` pixels tall, in proportions drawn from `rng`."""
    size = height * SUPERSAMPLE
    canvas = np.zeros((size, size), np.uint8)
    if suit == "D":
        width = rng.uniform(0.55, 0.8)
        bend = rng.uniform(0.0, 0.12)  # the sides curve in a little on many decks
        t = np.linspace(0, 1, 12)
        quarter = np.stack([0.5 + width / 2 * t, t / 2], axis=1)  # top to right corner; the rest mirrors it
        quarter[:, 0] -= bend * np.sin(math.pi * t) * width / 2
        outline = np.concatenate(
            [
                quarter,
                np.stack([quarter[::-1, 0], 1 - quarter[::-1, 1]], axis=1),
                np.stack([1 - quarter[:, 0], 1 - quarter[:, 1]], axis=1),
                np.stack([1 - quarter[::-1, 0], quarter[::-1, 1]], axis=1),
            ]
        )
        cv2.fillPoly(canvas, [(outline * size).astype(np.int32)], 255, cv2.LINE_AA)
    elif suit in "HS":
        width = rng.uniform(0.85, 1.05)
        body = 1.0 if suit == "H" else rng.uniform(0.68, 0.8)  # a spade's body leaves room for its stem
        outline = _heart(rng)
        if suit == "S":
            outline[:, 1] = 1 - outline[:, 1]  # point up
        outline = outline * [width * body, body] + [(1 - width * body) / 2, 0]
        cv2.fillPoly(canvas, [(outline * size).astype(np.int32)], 255, cv2.LINE_AA)
        if suit == "S":
            cv2.fillPoly(canvas, [_stem(size, rng)], 255, cv2.LINE_AA)
    elif suit == "C":
        radius = rng.uniform(0.2, 0.25)
        spread = rng.uniform(0.95, 1.2) * radius
        low = rng.uniform(0.45, 0.55)
        for cx, cy in ((0.5, radius), (0.5 - spread, low), (0.5 + spread, low)):
            cv2.circle(canvas, (int(cx * size), int(cy * size)), int(radius * size), 255, -1, cv2.LINE_AA)
        cv2.circle(canvas, (size // 2, int(low * size)), int(0.6 * radius * size), 255, -1, cv2.LINE_AA)
        cv2.fillPoly(canvas, [_stem(size, rng)], 255, cv2.LINE_AA)
    else:
        raise ValueError(f"not a suit: {suit!r}")
    small = cv2.resize(canvas, (height, height), interpolation=cv2.INTER_AREA)
    return _cropped(np.asarray(small, dtype=np.uint8))


def _ink(suit: str, rng: np.random.Generator) -> npt.NDArray[np.float64]:
    """The ink's colour (BGR): red for hearts and diamonds (now and then a pale pink), black or dark grey else."""
    if suit in "HD":
        if rng.random() < 0.15:
            return np.array([rng.uniform(110, 170), rng.uniform(100, 160), rng.uniform(210, 250)])
        return np.array([rng.uniform(0, 70), rng.uniform(0, 60), rng.uniform(140, 235)])
    grey = rng.uniform(0, 70)
    return np.array([grey, grey, grey]) + rng.uniform(-8, 8, 3)


def _paint(card: npt.NDArray[np.float64], mask: U8, x: int, y: int, colour: npt.NDArray[np.float64]) -> None:
    """Ink `mask` onto `card` with its top-left corner at (x, y), clipped to the card."""
    h, w = mask.shape
    x0, y0, x1, y1 = max(0, x), max(0, y), min(card.shape[1], x + w), min(card.shape[0], y + h)
    if x1 <= x0 or y1 <= y0:
        return
    alpha = mask[y0 - y : y1 - y, x0 - x : x1 - x, None].astype(np.float64) / 255
    card[y0:y1, x0:x1] = card[y0:y1, x0:x1] * (1 - alpha) + colour * alpha


def _middle(card: npt.NDArray[np.float64], rank: str, suit: str, colour: npt.NDArray[np.float64],
            rng: np.random.Generator) -> None:  # fmt: skip
    """What a card shows between its indices: pips for a number or an ace, a framed picture for a court card."""
    height, width = card.shape[:2]
    left, top, right, bottom = 0.24 * width, 0.18 * height, 0.76 * width, 0.82 * height
    if rank in "JQK":
        court = np.ascontiguousarray(card[int(top) : int(bottom), int(left) : int(right)])
        h, w = court.shape[:2]
        cv2.rectangle(court, (0, 0), (w - 1, h - 1), colour.tolist(), 2)
        for _ in range(int(rng.integers(6, 14))):  # a court figure: patches of colour and lines, inside its frame
            centre = (int(rng.uniform(0, w)), int(rng.uniform(0, h)))
            axes = (int(rng.uniform(3, 0.4 * w)), int(rng.uniform(3, 0.3 * h)))
            shade = rng.uniform(0, 255, 3).tolist()
            cv2.ellipse(court, centre, axes, float(rng.uniform(0, 180)), 0, 360, shade, int(rng.choice([-1, 2, 3])))
        card[int(top) : int(bottom), int(left) : int(right)] = court
        return
    count = 1 if rank == "A" else int(rank)
    columns = 1 if count <= 3 else 2 if count <= 8 else 3
    rows = math.ceil(count / columns)
    room = min((right - left) / columns, (bottom - top) / rows)  # each pip stays in its own cell
    pip = int(0.4 * width if rank == "A" else min(rng.uniform(0.15, 0.2) * width, 0.85 * room))
    for n in range(count):
        column, row = n % columns, n // columns
        cx = left + (right - left) * (column + 0.5) / columns
        cy = top + (bottom - top) * (row + 0.5) / rows
        mask = suit_mask(suit, pip, rng)
        if row >= rows / 2:  # the lower pips stand the other way up, as printed
            mask = np.ascontiguousarray(mask[::-1, ::-1])
        _paint(card, mask, int(cx - mask.shape[1] / 2), int(cy - mask.shape[0] / 2), colour)


def drawn_card(code: str, glyph: Glyph, rng: np.random.Generator, height: int = HEIGHT) -> Piece:
    """One card face of `code` whose ranks are drawn by `glyph`: the image and its two index squares."""
    rank, suit = code[:-1], code[-1]
    width = round(height * ASPECT * rng.uniform(0.95, 1.03))
    stock = rng.uniform(215, 252) * np.array([rng.uniform(0.93, 1.0), rng.uniform(0.96, 1.0), 1.0])
    card = np.empty((height, width, 3), np.float64)
    card[:] = stock
    colour = _ink(suit, rng)
    _middle(card, rank, suit, colour, rng)
    if rng.random() < 0.3:  # a printed border
        inset = int(rng.uniform(0.03, 0.06) * width)
        cv2.rectangle(card, (inset, inset), (width - inset, height - inset), colour.tolist(), 1)
    rank_mask = _scaled(glyph(rank, 64), round(rng.uniform(0.085, 0.13) * height), rng.uniform(0.8, 1.15))
    rank_height, rank_width = rank_mask.shape
    suit_ink = suit_mask(suit, round(rng.uniform(0.55, 0.85) * rank_height), rng)
    gap = round(rng.uniform(0.05, 0.3) * rank_height)
    box_width = max(rank_width, suit_ink.shape[1])
    box_height = rank_height + gap + suit_ink.shape[0]
    centre_x = rng.uniform(0.06, 0.1) * width + box_width / 2
    centre_y = rng.uniform(0.04, 0.07) * height + box_height / 2
    for _ in range(2):  # the top-left index, then the card half a turn round and the same again
        x, y = round(centre_x - box_width / 2), round(centre_y - box_height / 2)
        _paint(card, rank_mask, x + (box_width - rank_width) // 2, y, colour)
        _paint(card, suit_ink, x + (box_width - suit_ink.shape[1]) // 2, y + rank_height + gap, colour)
        card = card[::-1, ::-1]
    side = 1.3 * max(box_width, box_height)
    label = CODES.index(code)
    truths = ((label, centre_x, centre_y, side), (label, width - centre_x, height - centre_y, side))
    image = np.clip(card + rng.normal(0, 2.0, card.shape), 0, 255).astype(np.uint8)
    return Piece(image, truths)


def drawn_pieces(glyphs: list[Glyph], per_code: int, seed: int) -> list[Piece]:
    """`per_code` drawn cards of each of the 52 codes, each in a font drawn from `glyphs`."""
    rng = np.random.default_rng(seed)
    return [drawn_card(code, glyphs[int(rng.integers(len(glyphs)))], rng) for code in CODES for _ in range(per_code)]
