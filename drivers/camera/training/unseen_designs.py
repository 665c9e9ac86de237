"""Deck designs no training uses, for measuring the reader on decks it never saw (`bench/unseen_printed.py --designs
new`; docs/camera.md, "Designs no training used").

The printed decks of `printed.py` are all in the training: a card of theirs that the training did not draw is new,
its design is not. These two decks are in no training, and they are casino-like (white stock, two colours, J Q K):

- `kennard`: Adrian Kennard's deck (www.me.uk/cards, CC0), as packaged on npm by `@heruka_urgyen/react-playing-cards`
  0.5.0 (MIT), its two-colour faces;
- `aguilar`: Chris Aguilar's vectorized playing cards (LGPL-3.0), as packaged on npm by
  `@younestouati/playing-cards-standard-deck` 3.0.0 (LGPL-3.0; the ace of spades from Byron Knoll's public-domain
  cards).

Each package's tarball is fetched once from the npm registry into the cache (`artifacts/unseen-designs/`, not in the
repository) and checked by SHA-256; its card files are rendered with `rsvg-convert` (librsvg2-bin, which
`scripts/train-camera` installs) and their indices found as the printed decks' are (`printed.index_places`).
"""

from __future__ import annotations

import hashlib
import tarfile
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from drivers.camera.training.compose import Piece
from drivers.camera.training.dataset import CODES
from drivers.camera.training.printed import HEIGHT, U8, index_places, on_table, render

CACHE = Path(__file__).resolve().parents[3] / "artifacts" / "unseen-designs"
REGISTRY = "https://registry.npmjs.org"


@dataclass(frozen=True)
class Design:
    """A deck design in an npm package: the tarball, its SHA-256, and the file of each card inside it."""

    package: str
    version: str
    sha256: str
    folder: str  # in the tarball
    file_name: Callable[[str], str]  # a card's code (e.g. "10H") -> its file in `folder`

    @property
    def url(self) -> str:
        return f"{REGISTRY}/{self.package}/-/{self.package.split('/')[-1]}-{self.version}.tgz"


def _kennard_file(code: str) -> str:
    rank = "T" if code[:-1] == "10" else code[:-1]
    return f"{rank}{code[-1]}.svg"


def _aguilar_file(code: str) -> str:
    rank = {"A": "1", "J": "11", "Q": "12", "K": "13"}.get(code[:-1], code[:-1])
    return f"{rank}{code[-1].lower()}.svg"


DESIGNS = {
    "kennard": Design("@heruka_urgyen/react-playing-cards", "0.5.0",
                      "0a9e5c386c40af2ae591103589d3a4c340d66a325a64c3f5b1d3f6c0a907b468",
                      "package/src/images/2color", _kennard_file),
    "aguilar": Design("@younestouati/playing-cards-standard-deck", "3.0.0",
                      "35722591ff4efae9c66f62df6a6159d38bcf8742b38961d373c897aa4af13286",
                      "package/cards", _aguilar_file),
}  # fmt: skip


def tarball(design: Design, cache: Path = CACHE, url: str | None = None) -> Path:
    """The design's package tarball, fetched once (from `url`, the registry's unless given) and refused unless its
    SHA-256 is the one `DESIGNS` records: a measure must be of the cards it names."""
    path = cache / f"{design.package.replace('/', '_')}-{design.version}.tgz"
    if not path.is_file():
        cache.mkdir(parents=True, exist_ok=True)
        with urllib.request.urlopen(url or design.url, timeout=60) as response:
            data = response.read()
        if hashlib.sha256(data).hexdigest() != design.sha256:
            raise ValueError(f"{url or design.url}: not the tarball recorded (SHA-256 differs); nothing kept")
        path.write_bytes(data)
    elif hashlib.sha256(path.read_bytes()).hexdigest() != design.sha256:
        raise ValueError(f"{path}: not the tarball recorded (SHA-256 differs): delete it to fetch it again")
    return path


def card_files(design: Design, path: Path) -> dict[str, bytes]:
    """The SVG file of each of the 52 cards in the tarball at `path`; a card missing is an error."""
    with tarfile.open(path) as archive:
        members = {member.name: member for member in archive.getmembers() if member.isfile()}
        files = {}
        for code in CODES:
            name = f"{design.folder}/{design.file_name(code)}"
            if name not in members:
                raise ValueError(f"{path}: no {name} for {code}")
            extracted = archive.extractfile(members[name])
            assert extracted is not None  # a regular file, checked above
            files[code] = extracted.read()
    return files


def design_cards(name: str, cache: Path = CACHE) -> dict[str, U8]:
    """The 52 cards of design `name` (BGR, on the table colour of `printed.on_table`), rendered once and cached."""
    design = DESIGNS[name]
    folder = cache / f"{name}-{design.sha256[:16]}"
    files: dict[str, bytes] | None = None
    cards = {}
    for code in CODES:
        png = folder / f"{code}.png"
        if not png.is_file():
            files = files or card_files(design, tarball(design, cache))
            folder.mkdir(parents=True, exist_ok=True)
            cv2.imwrite(str(png), render(files[code], None, HEIGHT))
        cards[code] = on_table(np.asarray(cv2.imread(str(png), cv2.IMREAD_UNCHANGED), dtype=np.uint8))
    return cards


def design_pieces(names: list[str], cache: Path = CACHE) -> list[Piece]:
    """Every card of the designs named whose indices are found, as a piece for composed scenes."""
    pieces = []
    for name in names:
        cards = design_cards(name, cache)
        for label, code in enumerate(CODES):
            if places := index_places(card := cards[code]):
                pieces.append(Piece(card, tuple((label, x, y, side) for x, y, side in places)))
    return pieces
