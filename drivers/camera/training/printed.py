"""Printed decks: the card faces of free card games' deck designs, with their index squares found (training only).

The network reads the decks it trained on, not a new one (docs/camera.md, "Limitations"); the issue asks for "many
decks". Debian packages the decks of two card-game suites as SVG files, each a designer's deck with its own rank
font, suit shapes and layout (`DECKS`: the French-suited ones whose courts are lettered J, Q, K, in two colours).
Each card is rendered with `rsvg-convert` (librsvg2-bin) at `HEIGHT` pixels and its indices are found on the face:

- the top-left index by shape (`glyphs.index_box`, as the reader finds an index on a card's outline);
- every other printed copy of it (the bottom-right one half a turn round, and the top-right and bottom-left ones
  of decks that print four) by matching that index in the other corners, where symmetry puts it.

A card is kept only when its top-left index and its half-turn copy are both found where symmetry puts them: an index
printed but not labelled would teach the network that it is "not an index". A kept card is a `compose.Piece` laid
among the real photos' pieces in the training scenes. Rendered cards are cached (`cache`), keyed by the deck's
SHA-256; `DECKS` checks each file like the photos of `split.csv`, and training refuses another file.
"""

from __future__ import annotations

import gzip
import hashlib
import subprocess
from collections.abc import Sequence
from pathlib import Path

import cv2
import numpy as np
import numpy.typing as npt

from drivers.camera.detect import CARD_H, CARD_W, warp
from drivers.camera.glyphs import CORNER, index_box
from drivers.camera.training.compose import Piece
from drivers.camera.training.dataset import CODES

U8 = npt.NDArray[np.uint8]
AISLERIOT = Path("/usr/share/aisleriot/cards")  # Debian gnome-cards-data 1:3.22.23-1
KDE = Path("/usr/share/carddecks")  # Debian kdegames-card-data-kf5 4:22.12.3-1
# The decks used, by path and SHA-256 of the .svgz (every card looked at, with its index squares). Left out: German
# and Swiss suits, four-colour decks (a green club, a blue diamond), decks whose courts are lettered V, D, R or F, D,
# R throughout, two whose index is found on few cards (3, one of them wrongly; none), duplicates of a deck (bitmap
# exports, the same design in both suites) and files `rsvg-convert` cannot render.
DECKS = {
    AISLERIOT / "anglo.svgz": "781d7e8ca6f61f4fb1f6e0459803216a599751501b6b53fac9d2e6ab551c44a6",
    AISLERIOT / "anglo_modern.svgz": "357aeb21a427845b0bb5cb133e2e202d7892f0fd151345e65cba6d3f72461d23",
    AISLERIOT / "anglo_poker.svgz": "c410a478531cbb8be3d13e65bfaab23f3d66d7f2700ba2815969b5994dee83a2",
    AISLERIOT / "atlasnye.svgz": "71d1185c7ff75af968b5c92338b3d5a1bbd2b6365e5a8ead2160ae10693c84b9",
    AISLERIOT / "bellot.svgz": "eafb31e3abe7274aab61aed84089157d2a24740f927037fa4508d9910cf015b1",
    AISLERIOT / "berlin.svgz": "4dd6f6b0b7735bf051573f08cc825aa8b40d919483ec66ab95fb5a69d0982b9f",
    AISLERIOT / "dondorf.svgz": "ec67a4b70997f6197c91a3a1189b34d8863bd3905ff23a30429bd49c5a2a3f14",
    AISLERIOT / "gnomangelo.svgz": "8c5e57951b7633acbb213643720675415f1ac623554cc8d0ac0fb8a405b6d4cd",
    AISLERIOT / "guyenne-classic.svgz": "17bfef621c5950743106efc7abca76a8482a4b4740144b1790f3b863655542df",
    AISLERIOT / "lattmann.svgz": "f85a7d00f251e34b9333a95b265a219ece92705e5e7d9af5cb230f0dd512ec2f",
    AISLERIOT / "neoclassical.svgz": "492f8f8e342fc9e421fbd09964fb3e9734b111105fc7a1cc36605984169ef471",
    AISLERIOT / "orell.svgz": "9b334dad6b292fa2124122ecbf0ddb6f53ee624a2762e5905442ed5354e45029",
    AISLERIOT / "ornamental.svgz": "6700294904c0818ce04a43495b540ce20f6eddbb71df9a135e6d172d55644869",
    AISLERIOT / "paris.svgz": "f3e3c8cb94be50cf28727756370401d8331a96e81410da96d1139876551397ab",
    AISLERIOT / "rheinland.svgz": "3efff1931ebc8ba2c5d7b58cd87ab1ab01aa7c4aef04a7bee309b4f96c4d8ca5",
    AISLERIOT / "simplistic.svgz": "3ca6bc38b6ab9d9988ab90e1b4551c4aa0ea2036ced0d4f89061442438bb99c4",
    AISLERIOT / "slavic_costumes.svgz": "73f7fb6e1c41b55c0e22f692cc50653eb5946c394b169aef9f3a11524d8adc38",
    AISLERIOT / "tigullio.svgz": "1ccd4ffacc3a5a862be845d6670c156eec4fc3a85c4dc86f20467146bb58b672",
    KDE / "svg-jolly-royal/jolly-royal.svgz": "164a84df3175508621393258d3c16e8616255fa9723e47c246ba4cc0cf24e04f",
    KDE / "svg-nicu-white/white.svgz": "2c8936441e742b61d5a2a0ba636cf096f8ba7b9e70320c76fcca9547fb9d37ef",
    KDE / "svg-penguins/penguins.svgz": "60fc06b254e6845eda4b7e90c02a88a384960b26b66452a815ac13b5ba8d1ff8",
    KDE / "svg-standard/standard.svgz": "b932e756ecc49423c6fcc1d0cadf2db589443e4f9a3bd5b7efc45e692628c2d7",
}
# Ranks some decks print with other letters (B and D for the jack and queen, Cyrillic В, Д and Т for the jack, queen
# and ace): those cards are left out, not taught as J, Q or A.
OTHER_LETTERS = {
    AISLERIOT / "berlin.svgz": "JQ",
    AISLERIOT / "lattmann.svgz": "JQ",
    AISLERIOT / "rheinland.svgz": "JQ",
    AISLERIOT / "slavic_costumes.svgz": "JQA",
}
HEIGHT = 280  # a rendered card's height in pixels, as drawn.py's (compose.py scales it to a studio's index sizes)
SIDE_SCALE = 1.3  # an index square's side over the longer side of the index's box, as the photos' labels
TABLE = (70, 100, 60)  # what shows beyond a card's rounded corners (BGR): a green felt
MATCH = 0.7  # normalised correlation above which a corner prints the top-left index again
SYMMETRY = 0.04  # ... and at most this far (a fraction of the card's height) from where symmetry puts it
_RANKS = {"A": "1", "J": "jack", "Q": "queen", "K": "king"}
_SUITS = {"S": "spade", "H": "heart", "D": "diamond", "C": "club"}


def element(path: Path, code: str) -> str:
    """The SVG id of card `code` in deck `path`: `spade_1` in GNOME's decks, `1_spade` in KDE's."""
    rank, suit = _RANKS.get(code[:-1], code[:-1]), _SUITS[code[-1]]
    return f"{suit}_{rank}" if path.is_relative_to(AISLERIOT) else f"{rank}_{suit}"


def render(svg: bytes, name: str | None, height: int = HEIGHT) -> U8:
    """Card `name` of an SVG deck (the whole file if None: one card a file) as BGRA, `height` pixels tall, cropped
    to the card."""

    def run(zoom: float) -> U8:
        element = ["-i", name] if name is not None else []
        done = subprocess.run(["rsvg-convert", *element, "-z", f"{zoom:.5f}", "-b", "none"],
                              input=svg, capture_output=True, check=True)  # fmt: skip
        image = cv2.imdecode(np.frombuffer(done.stdout, np.uint8), cv2.IMREAD_UNCHANGED)
        if image is None:
            raise ValueError(f"{name or 'the card'}: rsvg-convert gave no image")
        if image.ndim == 2 or image.shape[2] == 3:  # no transparency: all of it is card
            image = cv2.cvtColor(image, cv2.COLOR_GRAY2BGRA if image.ndim == 2 else cv2.COLOR_BGR2BGRA)
        return np.asarray(image, dtype=np.uint8)

    def card(image: U8) -> tuple[slice, slice]:
        ys, xs = np.nonzero(image[:, :, 3] > 8)
        if len(ys) == 0:
            raise ValueError(f"{name or 'the card'}: rendered empty")
        return slice(int(ys.min()), int(ys.max()) + 1), slice(int(xs.min()), int(xs.max()) + 1)

    # A deck's element may sit in a larger canvas: measure it at zoom 1, then render it at the height wanted.
    rows, _ = card(run(1.0))
    image = run(height / (rows.stop - rows.start))
    rows, columns = card(image)
    return np.ascontiguousarray(image[rows, columns])


def on_table(card: U8) -> U8:
    """A BGRA card over the table colour: BGR."""
    alpha = card[:, :, 3:4].astype(np.float32) / 255
    return np.asarray(card[:, :, :3] * alpha + np.array(TABLE, np.float32) * (1 - alpha), dtype=np.uint8)


def index_places(card: U8) -> list[tuple[float, float, float]]:
    """Every printed index of a card face (BGR) as (x, y, side of its square), the top-left one first; empty unless
    its half-turn copy is found too."""
    height, width = card.shape[:2]
    quad = np.array([[0, 0], [width, 0], [width, height], [0, height]], dtype=np.float32)
    box = index_box(warp(card, quad, CORNER))
    if box is None:
        return []
    sx, sy = width / CARD_W, height / CARD_H  # the corner patch's pixels -> the card's
    x0, y0, x1, y1 = box[0] * sx, box[1] * sy, (box[0] + box[2]) * sx, (box[1] + box[3]) * sy
    x, y, side = (x0 + x1) / 2, (y0 + y1) / 2, SIDE_SCALE * max(x1 - x0, y1 - y0)
    gray = np.asarray(cv2.cvtColor(card, cv2.COLOR_BGR2GRAY), dtype=np.uint8)
    index = gray[max(0, int(y0) - 2) : int(y1) + 3, max(0, int(x0) - 2) : int(x1) + 3]
    places = [(x, y, side)]
    # (turned half round?, where symmetry puts the copy): bottom-right first, it must be there
    for turned, expected in ((True, (width - x, height - y)), (False, (width - x, y)), (True, (x, height - y))):
        copy = np.asarray(cv2.rotate(index, cv2.ROTATE_180), dtype=np.uint8) if turned else index
        found = _match(gray, copy, expected, height)
        if found is None and not places[1:]:
            return []
        if found is not None:
            places.append((*found, side))
    return places


def _match(gray: U8, index: U8, expected: tuple[float, float], height: int) -> tuple[float, float] | None:
    """Where `index` is printed near `expected` (its centre), if it is."""
    reach = SYMMETRY * height
    h, w = index.shape
    x0, y0 = int(max(0, expected[0] - w / 2 - reach)), int(max(0, expected[1] - h / 2 - reach))
    region = gray[y0 : int(expected[1] + h / 2 + reach) + 1, x0 : int(expected[0] + w / 2 + reach) + 1]
    if region.shape[0] < h or region.shape[1] < w:
        return None
    _, best, _, at = cv2.minMaxLoc(cv2.matchTemplate(region, index, cv2.TM_CCOEFF_NORMED))
    return (x0 + at[0] + w / 2, y0 + at[1] + h / 2) if best >= MATCH else None


def deck_cards(path: Path, cache: Path) -> dict[str, U8]:
    """The 52 cards of a deck (BGR, on the table colour), rendered once and cached under `cache`; the deck's file is
    checked against `DECKS`."""
    data = path.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    if DECKS.get(path) != digest:
        raise ValueError(f"{path}: not a deck the training uses, or not the file it was made with (SHA-256 differs)")
    folder = cache / digest[:16]
    folder.mkdir(parents=True, exist_ok=True)
    svg: bytes | None = None
    cards = {}
    for code in CODES:
        file = folder / f"{code}.png"
        if not file.is_file():
            svg = svg or gzip.decompress(data)
            cv2.imwrite(str(file), render(svg, element(path, code)))
        cards[code] = on_table(np.asarray(cv2.imread(str(file), cv2.IMREAD_UNCHANGED), dtype=np.uint8))
    return cards


def printed_pieces(per_code: int, seed: int, cache: Path) -> list[Piece]:
    """`per_code` cards of each code, each from a deck drawn at random among those that print it with its letter and
    whose card of that code has its indices found (`index_places`)."""
    return [piece for piece, _, drawn in _draw(_decks(cache), per_code, seed) if drawn]


def unseen_pieces(per_code: int, seed: int, cache: Path, also: Sequence[tuple[int, int]] = ()) -> list[Piece]:
    """The cards `printed_pieces(per_code, seed)` never draws, of the same decks: cards the network never saw, printed
    in designs it learned from other cards of (for measuring, `bench/unseen_printed.py`; a training's `per_code` and
    seed: its `.json`'s `printed` and `train.printed_draw_seed` of its `seed`). `also`: other trainings' (`per_code`,
    seed); the cards they draw are left out too, so that networks trained on different draws are measured on the
    same cards, none of which any of them saw."""
    decks = _decks(cache)
    seen = {card for other in also for _, card, drawn in _draw(decks, *other) if drawn}
    return [piece for piece, card, drawn in _draw(decks, per_code, seed) if not drawn and card not in seen]


def _decks(cache: Path) -> dict[Path, dict[str, U8]]:
    return {path: deck_cards(path, cache) for path in DECKS}


def _draw(decks: dict[Path, dict[str, U8]], per_code: int, seed: int) -> list[tuple[Piece, tuple[Path, str], bool]]:
    """Every card with its indices found, as a piece, with its deck and code and whether the draw takes it: for each
    code, `per_code` draws (with replacement) among the decks that print it with its letter; the drawn ones first, in
    the order drawn."""
    rng = np.random.default_rng(seed)
    drawn: list[tuple[Piece, tuple[Path, str], bool]] = []
    left: list[tuple[Piece, tuple[Path, str], bool]] = []
    for label, code in enumerate(CODES):
        found = [
            (Piece(card, tuple((label, x, y, side) for x, y, side in places)), (path, code))
            for path, deck in decks.items()
            if code[:-1] not in OTHER_LETTERS.get(path, "") and (places := index_places(card := deck[code]))
        ]
        picks = [int(rng.integers(len(found))) for _ in range(per_code if found else 0)]
        drawn += [(*found[pick], True) for pick in picks]
        left += [(*card, False) for pick, card in enumerate(found) if pick not in picks]
    return drawn + left
