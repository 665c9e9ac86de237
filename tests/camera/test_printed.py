"""Printed decks for training (drivers/camera/training/printed.py): each card's indices found where they are printed,
a card whose copies are not all found left out, the decks checked by hash. The card faces here are drawn with
OpenCV's own font and `drawn.suit_mask`, laid out as a printed deck's (the Debian decks and `rsvg-convert` are
installed for training only)."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from drivers.camera.training import printed
from drivers.camera.training.drawn import suit_mask
from drivers.camera.training.printed import deck_cards, element, index_places, on_table
from tests.camera.test_drawn import hershey

WIDTH, HEIGHT = 200, 280


def face(code: str, seed: int = 3, four: bool = False) -> tuple[np.ndarray, list[tuple[float, float, float]]]:
    """A card face printed as a casino deck: the index (a narrow rank 26 pixels tall over its suit, centred) in the
    top-left corner and half a turn round in the bottom-right, a pip in the middle; and where its indices' centres
    are, with the longer side of their boxes. `four`: the index in the other two corners as well (upright at the top
    right, half a turn round at the bottom left), as some decks print it."""
    card = np.full((HEIGHT, WIDTH, 3), 240, np.uint8)
    colour = np.array((30, 30, 200) if code[-1] in "HD" else (25, 25, 25), np.uint8)
    rank = hershey(code[:-1], 26)
    rank = cv2.resize(rank, (min(rank.shape[1], 20), 26), interpolation=cv2.INTER_AREA)
    suit = suit_mask(code[-1], 16, np.random.default_rng(seed))
    width = max(rank.shape[1], suit.shape[1])
    index = np.zeros((26 + 4 + suit.shape[0], width), np.uint8)
    index[:26, (width - rank.shape[1]) // 2 :][:, : rank.shape[1]] = rank
    index[30:, (width - suit.shape[1]) // 2 :][:, : suit.shape[1]] = suit
    h, w = index.shape
    places = [(8, 10, False), (WIDTH - 8 - w, HEIGHT - 10 - h, True)]
    places += [(WIDTH - 8 - w, 10, False), (8, HEIGHT - 10 - h, True)] if four else []
    for x, y, turned in places:
        mask = index[::-1, ::-1] if turned else index
        card[y : y + h, x : x + w][mask > 127] = colour
    pip = suit_mask(code[-1], 50, np.random.default_rng(seed))
    py, px = (HEIGHT - pip.shape[0]) // 2, (WIDTH - pip.shape[1]) // 2
    card[py : py + pip.shape[0], px : px + pip.shape[1]][pip > 127] = colour
    return card, [(x + w / 2, y + h / 2, max(w, h)) for x, y, _ in places]


@pytest.mark.parametrize("code", ["AS", "10D", "QC", "7H", "2S"])
def test_both_printed_indices_of_a_card_are_found_where_they_are(code: str) -> None:
    card, truths = face(code)
    places = index_places(card)
    assert len(places) == 2
    for (x, y, side), (tx, ty, box) in zip(places, truths, strict=True):
        assert abs(x - tx) < 0.2 * box and abs(y - ty) < 0.2 * box, (code, (x, y), (tx, ty))
        assert side == pytest.approx(printed.SIDE_SCALE * box, rel=0.2)


def test_a_card_whose_half_turn_index_is_not_found_is_left_out() -> None:
    """An index printed but not labelled would teach the network that it is not an index."""
    card, truths = face("KH")
    image = card.copy()
    x, y, box = truths[1]
    half = round(0.6 * box)
    image[round(y) - half : round(y) + half, round(x) - half : round(x) + half] = 240  # blank card stock
    assert index_places(image) == []
    assert len(index_places(card)) == 2


def test_a_blank_card_has_no_index() -> None:
    assert index_places(np.full((280, 200, 3), 235, np.uint8)) == []


def test_four_printed_indices_are_all_found() -> None:
    """Some decks print the index in all four corners: the top-right and bottom-left copies are labelled too."""
    card, truths = face("9C", four=True)
    places = index_places(card)
    assert len(places) == 4
    for (x, y, _), (tx, ty, box) in zip(places, truths, strict=True):
        assert abs(x - tx) < 0.2 * box and abs(y - ty) < 0.2 * box


def test_card_names_follow_each_suite_of_decks() -> None:
    assert element(printed.AISLERIOT / "paris.svgz", "AS") == "spade_1"
    assert element(printed.AISLERIOT / "paris.svgz", "10D") == "diamond_10"
    assert element(printed.KDE / "svg-standard/standard.svgz", "QH") == "queen_heart"
    assert element(printed.KDE / "svg-standard/standard.svgz", "7C") == "7_club"


def test_a_transparent_corner_shows_the_table() -> None:
    card = np.zeros((4, 4, 4), np.uint8)
    card[..., :3] = 255
    card[1:, :, 3] = 255  # the first row transparent
    flat = on_table(card)
    assert flat[0, 0].tolist() == list(printed.TABLE)
    assert flat[2, 2].tolist() == [255, 255, 255]


def test_a_deck_not_listed_or_changed_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    deck = tmp_path / "deck.svgz"
    deck.write_bytes(b"not the deck")
    with pytest.raises(ValueError, match="SHA-256"):
        deck_cards(deck, tmp_path / "cache")
    monkeypatch.setitem(printed.DECKS, deck, "0" * 64)
    with pytest.raises(ValueError, match="SHA-256"):
        deck_cards(deck, tmp_path / "cache")
    assert not (tmp_path / "cache").exists()  # nothing rendered from a file refused


def test_the_unseen_cards_are_every_found_card_the_training_draw_leaves(monkeypatch: pytest.MonkeyPatch) -> None:
    """`unseen_pieces` (what `bench/unseen_printed.py` measures on) holds no card `printed_pieces` draws for
    training, and the two together hold every card of the decks whose indices are found, each once. Three decks of
    drawn faces stand in for the Debian ones: one prints no index on its queens, one letters its jack otherwise."""
    codes = ["AS", "QH", "JC", "7D"]
    faces = {code: face(code)[0] for code in codes}
    decks = {Path(f"/deck{n}.svgz"): {code: faces[code].copy() + n for code in codes} for n in range(3)}
    decks[Path("/deck1.svgz")]["QH"][:] = 240  # blank: no index found
    monkeypatch.setattr(printed, "CODES", tuple(codes))
    monkeypatch.setattr(printed, "_decks", lambda cache: decks)
    monkeypatch.setitem(printed.OTHER_LETTERS, Path("/deck2.svgz"), "J")
    drawn = printed.printed_pieces(2, 7, Path("unused"))
    unseen = printed.unseen_pieces(2, 7, Path("unused"))

    def cards(pieces: list) -> list[tuple[int, int]]:  # (label, the deck it came from: its faces are lightened by n)
        return [(piece.truths[0][0], int(piece.image[0, 0, 0]) - 240) for piece in pieces]

    assert len(drawn) == 2 * len(codes)
    assert not set(cards(drawn)) & set(cards(unseen))
    assert len(set(cards(unseen))) == len(cards(unseen))
    found = {(label, n) for label, code in enumerate(codes) for n in range(3)} - {(1, 1), (2, 2)}
    assert set(cards(drawn)) | set(cards(unseen)) == found
    assert all(len(piece.truths) == 2 for piece in drawn + unseen)  # both printed corners labelled
    # measured beside another training's draw: only the cards neither drew
    other = set(cards(printed.printed_pieces(3, 8, Path("unused"))))
    unseen_by_both = printed.unseen_pieces(2, 7, Path("unused"), also=[(3, 8)])
    assert other - set(cards(drawn))  # the other draw took cards this one left, else the test shows nothing
    assert cards(unseen_by_both) == [card for card in cards(unseen) if card not in other]
