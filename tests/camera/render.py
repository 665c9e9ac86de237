"""Synthetic cards and frames for the camera tests and the benchmark, drawn with OpenCV shapes and fonts.

A card is a white rounded rectangle with the index (rank in a Hershey font, suit pip drawn from circles and
polygons) in the top-left corner and, turned half a turn, in the bottom-right; pips or a court card's frame fill the
middle. A frame is a felt-green cloth with cards laid on it at any angle, in perspective, then degraded on demand
with sensor noise, blur and a glare spot. Everything is seeded: the same seed draws the same frame.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np
import numpy.typing as npt

from drivers.camera.image_io import u8

Image = npt.NDArray[np.uint8]

RANKS = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
SUITS = ("S", "H", "D", "C")
CODES = tuple(rank + suit for suit in SUITS for rank in RANKS)
RED = (30, 30, 200)
BLACK = (25, 25, 25)
CARD_W, CARD_H = 252, 352  # drawing size; 63 x 88 mm at 4 px/mm


def pip(image: Image, suit: str, centre: tuple[float, float], size: float, colour: tuple[int, int, int],
        upside_down: bool = False) -> None:  # fmt: skip
    """Draw a suit symbol `size` pixels tall centred on `centre`."""
    layer = np.zeros(image.shape[:2], dtype=np.uint8)
    s = size * 4  # draw at 4x with sub-pixel shift, for smooth edges
    cx, cy = centre[0] * 4, centre[1] * 4

    def point(x: float, y: float) -> tuple[int, int]:
        return round(cx + x * s), round(cy + (-y if upside_down else y) * s)

    def circle(x: float, y: float, r: float) -> None:
        cv2.circle(layer, point(x, y), round(r * s), 255, -1, cv2.LINE_AA, shift=2)

    def polygon(points: list[tuple[float, float]]) -> None:
        cv2.fillPoly(layer, [np.array([point(x, y) for x, y in points], dtype=np.int32)], 255, cv2.LINE_AA, shift=2)

    if suit == "D":
        polygon([(0, -0.5), (0.36, 0), (0, 0.5), (-0.36, 0)])
    elif suit == "H":
        circle(-0.22, -0.2, 0.25)
        circle(0.22, -0.2, 0.25)
        polygon([(-0.46, -0.12), (0.46, -0.12), (0, 0.5)])
    elif suit == "S":
        circle(-0.22, 0.12, 0.24)
        circle(0.22, 0.12, 0.24)
        polygon([(-0.45, 0.06), (0.45, 0.06), (0, -0.5)])
        polygon([(0, 0.15), (0.16, 0.5), (-0.16, 0.5)])
    elif suit == "C":
        circle(0, -0.24, 0.21)
        circle(-0.24, 0.1, 0.21)
        circle(0.24, 0.1, 0.21)
        polygon([(0, -0.05), (0.15, 0.5), (-0.15, 0.5)])
    else:
        raise ValueError(f"unknown suit {suit!r}")
    alpha = layer.astype(np.float32)[..., None] / 255.0
    image[:] = (image * (1 - alpha) + np.array(colour, dtype=np.float32) * alpha).astype(np.uint8)


def _index(card: Image, rank: str, suit: str, colour: tuple[int, int, int]) -> None:
    """The rank and the pip under it, in the top-left corner."""
    font, scale, thickness = cv2.FONT_HERSHEY_SIMPLEX, 1.15, 3
    (width, height), _ = cv2.getTextSize(rank, font, scale, thickness)
    if width > 36:  # the ten: squeeze it as printed decks do
        text = np.full((height + 8, width + 8, 3), 255, dtype=np.uint8)
        cv2.putText(text, rank, (4, height + 4), font, scale, colour, thickness, cv2.LINE_AA)
        text = u8(cv2.resize(text, (38, height + 8), interpolation=cv2.INTER_AREA))
        x0, y0 = 6, 12 - 4
        region = card[y0 : y0 + text.shape[0], x0 : x0 + text.shape[1]]
        np.minimum(region, text, out=region)
        centre_x = x0 + 19
    else:
        x0 = 25 - width // 2
        cv2.putText(card, rank, (x0, 12 + height), font, scale, colour, thickness, cv2.LINE_AA)
        centre_x = 25
    pip(card, suit, (centre_x, 12 + height + 24), 26, colour)


_PIP_ROWS = {  # columns x rows of pips in the body, as (x, y) fractions of the body box
    1: [(0.5, 0.5)],
    2: [(0.5, 0.0), (0.5, 1.0)],
    3: [(0.5, 0.0), (0.5, 0.5), (0.5, 1.0)],
    4: [(0.0, 0.0), (1.0, 0.0), (0.0, 1.0), (1.0, 1.0)],
    5: [(0.0, 0.0), (1.0, 0.0), (0.5, 0.5), (0.0, 1.0), (1.0, 1.0)],
    6: [(0.0, 0.0), (1.0, 0.0), (0.0, 0.5), (1.0, 0.5), (0.0, 1.0), (1.0, 1.0)],
    7: [(0.0, 0.0), (1.0, 0.0), (0.5, 0.25), (0.0, 0.5), (1.0, 0.5), (0.0, 1.0), (1.0, 1.0)],
    8: [(0.0, 0.0), (1.0, 0.0), (0.5, 0.25), (0.0, 0.5), (1.0, 0.5), (0.5, 0.75), (0.0, 1.0), (1.0, 1.0)],
    9: [(0.0, 0.0), (1.0, 0.0), (0.0, 0.33), (1.0, 0.33), (0.5, 0.5), (0.0, 0.67), (1.0, 0.67), (0.0, 1.0),
        (1.0, 1.0)],
    10: [(0.0, 0.0), (1.0, 0.0), (0.5, 0.17), (0.0, 0.33), (1.0, 0.33), (0.0, 0.67), (1.0, 0.67), (0.5, 0.83),
         (0.0, 1.0), (1.0, 1.0)],
}  # fmt: skip


def render_card(code: str) -> tuple[Image, npt.NDArray[np.uint8]]:
    """A face-up card (BGR) and its mask (255 on the card), CARD_W x CARD_H pixels."""
    rank, suit = code[:-1], code[-1]
    colour = RED if suit in "HD" else BLACK
    card = np.full((CARD_H, CARD_W, 3), 250, dtype=np.uint8)
    mask = np.zeros((CARD_H, CARD_W), dtype=np.uint8)
    radius = 14
    cv2.rectangle(mask, (radius, 0), (CARD_W - 1 - radius, CARD_H - 1), 255, -1)
    cv2.rectangle(mask, (0, radius), (CARD_W - 1, CARD_H - 1 - radius), 255, -1)
    for x in (radius, CARD_W - 1 - radius):
        for y in (radius, CARD_H - 1 - radius):
            cv2.circle(mask, (x, y), radius, 255, -1, cv2.LINE_AA)
    if rank in ("J", "Q", "K"):
        cv2.rectangle(card, (58, 46), (CARD_W - 59, CARD_H - 47), colour, 2)
        cv2.rectangle(card, (64, 52), (CARD_W - 65, CARD_H - 53), (60, 170, 220), -1)
        cv2.putText(card, rank, (92, 220), cv2.FONT_HERSHEY_TRIPLEX, 3.2, colour, 6, cv2.LINE_AA)
        pip(card, suit, (84, 84), 40, colour)
    else:
        count = 1 if rank == "A" else int(rank)
        size = 110 if rank == "A" else 44
        for fx, fy in _PIP_ROWS[count]:
            centre = (80 + fx * (CARD_W - 160), 62 + fy * (CARD_H - 124))
            pip(card, suit, centre, size, colour, upside_down=fy > 0.5)
    _index(card, rank, suit, colour)
    turned = card[::-1, ::-1].copy()
    _index(turned, rank, suit, colour)
    card = turned[::-1, ::-1].copy()
    card[mask == 0] = 0
    return card, mask


@dataclass(frozen=True)
class Placed:
    code: str
    corners: npt.NDArray[np.float32]  # where the card's corners landed, clockwise from its top-left

    @property
    def box(self) -> tuple[int, int, int, int]:
        x0, y0 = np.floor(self.corners.min(axis=0)).astype(int)
        x1, y1 = np.ceil(self.corners.max(axis=0)).astype(int)
        return int(x0), int(y0), int(x1 - x0), int(y1 - y0)


def felt(size: tuple[int, int], rng: np.random.Generator) -> Image:
    """A green baize cloth, (width, height), with a little texture and uneven light."""
    width, height = size
    cloth = np.empty((height, width, 3), dtype=np.float32)
    cloth[:] = (40, 105, 35)
    texture = cv2.GaussianBlur(rng.normal(0, 10, (height, width)).astype(np.float32), (0, 0), 1.5)
    cloth += texture[..., None]
    yy, xx = np.mgrid[0:height, 0:width].astype(np.float32)
    light = 1.0 + 0.15 * np.cos((xx / width - 0.3) * 2.5) * np.cos((yy / height - 0.6) * 2.0)
    return u8(np.clip(cloth * light[..., None], 0, 255).astype(np.uint8))


def place(frame: Image, code: str, centre: tuple[float, float], width: float, angle: float, tilt: float,
          rng: np.random.Generator) -> Placed:  # fmt: skip
    """Lay a card on the frame: `width` pixels wide, turned `angle` degrees, its corners pushed up to `tilt` (a
    fraction of its width) for perspective."""
    card, mask = render_card(code)
    height = width * CARD_H / CARD_W
    theta = np.deg2rad(angle)
    rotation = np.array([[np.cos(theta), -np.sin(theta)], [np.sin(theta), np.cos(theta)]], dtype=np.float32)
    local = np.array([[-width / 2, -height / 2], [width / 2, -height / 2], [width / 2, height / 2],
                      [-width / 2, height / 2]], dtype=np.float32)  # fmt: skip
    local += rng.uniform(-tilt * width, tilt * width, local.shape).astype(np.float32)
    corners = (local @ rotation.T + np.array(centre, dtype=np.float32)).astype(np.float32)
    source = np.array([[0, 0], [CARD_W - 1, 0], [CARD_W - 1, CARD_H - 1], [0, CARD_H - 1]], dtype=np.float32)
    if width < CARD_W * 0.7:  # shrink smoothly: a camera integrates light over each pixel
        sigma = 0.4 * CARD_W / width
        card = u8(cv2.GaussianBlur(card, (0, 0), sigma))
        mask = u8(cv2.GaussianBlur(mask, (0, 0), sigma))
    # draw into the card's neighbourhood only (its shadow included)
    height_px, width_px = frame.shape[:2]
    x0, y0 = np.maximum(np.floor(corners.min(axis=0)).astype(int) - 12, 0)
    x1, y1 = np.minimum(np.ceil(corners.max(axis=0)).astype(int) + 12, [width_px, height_px])
    if x1 <= x0 or y1 <= y0:
        return Placed(code, corners)
    matrix = cv2.getPerspectiveTransform(source, corners - np.array([x0, y0], dtype=np.float32))
    size = (int(x1 - x0), int(y1 - y0))
    warped = cv2.warpPerspective(card, matrix, size, flags=cv2.INTER_LINEAR)
    alpha = cv2.warpPerspective(mask, matrix, size, flags=cv2.INTER_LINEAR).astype(np.float32) / 255.0
    shadow = cv2.GaussianBlur(alpha, (0, 0), 3)[..., None]  # a soft shadow under the card
    alpha = alpha[..., None]
    region = frame[y0:y1, x0:x1].astype(np.float32) * (1 - 0.35 * shadow)
    frame[y0:y1, x0:x1] = (region * (1 - alpha) + warped * alpha).astype(np.uint8)
    return Placed(code, corners)


def degrade(frame: Image, rng: np.random.Generator, noise: float = 0.0, blur: float = 0.0,
            glare: float = 0.0) -> Image:  # fmt: skip
    """Sensor noise (standard deviation in grey levels), Gaussian blur (sigma in pixels) and a glare spot (peak
    brightness added, 0..255) at a random place."""
    out = frame.astype(np.float32)
    if glare > 0:
        height, width = frame.shape[:2]
        cx, cy = rng.uniform(0, width), rng.uniform(0, height)
        radius = rng.uniform(0.08, 0.2) * width
        yy, xx = np.mgrid[0:height, 0:width].astype(np.float32)
        spot = glare * np.exp(-((xx - cx) ** 2 + (yy - cy) ** 2) / (2 * radius**2))
        out += spot[..., None]
    if blur > 0:
        out = np.asarray(cv2.GaussianBlur(out, (0, 0), blur), dtype=np.float32)
    if noise > 0:
        out += rng.normal(0, noise, out.shape).astype(np.float32)
    return np.clip(out, 0, 255).astype(np.uint8)


def filmed(frame: Image, rng: np.random.Generator, noise: float = 4.0, quality: int = 80) -> Image:
    """`frame` as a camera's stream gives it: its own sensor noise (standard deviation in grey levels) and JPEG
    compression at `quality` (a camera filming a still table gives a new one of these each frame)."""
    noisy = frame.astype(np.float32) + noise * rng.standard_normal(frame.shape, dtype=np.float32)
    noisy = np.clip(noisy, 0, 255).astype(np.uint8)
    ok, encoded = cv2.imencode(".jpg", noisy, [cv2.IMWRITE_JPEG_QUALITY, quality])
    decoded = cv2.imdecode(encoded, cv2.IMREAD_UNCHANGED) if ok else None
    if decoded is None:
        raise ValueError("the frame could not be compressed")
    return u8(decoded)


def index_swapped(frame: Image, at: tuple[float, float, float], other: tuple[float, float, float]) -> Image | None:
    """A copy of `frame` whose index square at `at` (centre x, y and side) shows the one at `other` instead, scaled
    to it: a card changed under the camera. None if either square reaches past the frame."""
    height, width = frame.shape[:2]
    squares = []
    for x, y, side in (at, other):
        half = int(side / 2)
        x0, y0 = int(x) - half, int(y) - half
        if half < 2 or x0 < 0 or y0 < 0 or x0 + 2 * half > width or y0 + 2 * half > height:
            return None
        squares.append((x0, y0, 2 * half))
    (x0, y0, side), (ox, oy, other_side) = squares
    changed = frame.copy()
    patch = frame[oy : oy + other_side, ox : ox + other_side]
    changed[y0 : y0 + side, x0 : x0 + side] = cv2.resize(patch, (side, side))
    return changed


def photo(code: str, seed: int = 0, size: tuple[int, int] = (360, 480)) -> Image:
    """An enrollment photo: the card alone, nearly upright, filling much of the picture."""
    rng = np.random.default_rng(seed)
    frame = felt(size, rng)
    place(frame, code, (size[0] / 2, size[1] / 2), size[0] * 0.55, rng.uniform(-4, 4), 0.01, rng)
    return degrade(frame, rng, noise=2.0)


def table(
    codes: list[str],
    seed: int,
    size: tuple[int, int] = (1280, 720),
    card_width: tuple[float, float] = (115, 150),
    any_angle: bool = True,
    tilt: float = 0.04,
    noise: float = 0.0,
    blur: float = 0.0,
    glare: float = 0.0,
) -> tuple[Image, list[Placed]]:
    """A frame with the given cards laid apart from each other on the cloth, at random angles and places."""
    rng = np.random.default_rng(seed)
    frame = felt(size, rng)
    width, height = size
    columns = max(1, min(len(codes), 4))
    rows = (len(codes) + columns - 1) // columns
    placed = []
    for index, code in enumerate(codes):
        column, row = index % columns, index // columns
        cell_w, cell_h = width / columns, height / rows
        card_w = rng.uniform(*card_width)
        reach = card_w * (0.87 + tilt) + 6  # half the card's diagonal: it stays whole at any angle
        cx = (column + 0.5) * cell_w + rng.uniform(-1, 1) * max(0.0, cell_w / 2 - reach - 4)
        cy = (row + 0.5) * cell_h + rng.uniform(-1, 1) * max(0.0, cell_h / 2 - reach - 4)
        angle = rng.uniform(0, 360) if any_angle else rng.uniform(-10, 10)
        placed.append(place(frame, code, (cx, cy), card_w, angle, tilt, rng))
    return degrade(frame, rng, noise=noise, blur=blur, glare=glare), placed
