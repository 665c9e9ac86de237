"""The synthetic training scenes (drivers/camera/training/compose.py): their index labels follow the pixels."""

from __future__ import annotations

import numpy as np

from drivers.camera.training import split
from drivers.camera.training.compose import SHOWN, Piece, scene, scene_with_hidden, share_shown
from drivers.camera.training.dataset import ERRATA, label_names


def test_labelled_indices_lie_where_the_pieces_put_them() -> None:
    """A piece with a marked spot at each labelled index: after the turn, the scale, the overlap and the camera's
    perspective, every label of the scene still lies on a marked spot (to within a pixel or two of blur)."""
    image = np.full((200, 140, 3), 235, dtype=np.uint8)
    truths = []
    for x, y in ((20, 30), (120, 170), (70, 100)):
        image[y - 6 : y + 7, x - 6 : x + 7] = (0, 0, 255)
        truths.append((0, float(x), float(y), 30.0))
    piece = Piece(image, tuple(truths))
    labelled = 0
    for seed in range(8):
        frame, found = scene([piece], np.random.default_rng(seed))
        for _, square in found:
            labelled += 1
            b, g, r = frame[round(square.y), round(square.x)].astype(int)
            assert r - max(g, b) > 60, (seed, square)
    assert labelled >= 10


def test_label_errata_correct_the_listed_boxes_and_nothing_else() -> None:
    """The roboflow labels are read through `label_names`: a box listed in `ERRATA` gets the card seen in the photo,
    every other box keeps its label as the file gives it."""
    photo = next(path for path in split.read()["validation"] if path.stem == "WIN_20240627_11_38_29_Pro")
    names = (photo.parents[1] / "classes.txt").read_text().split("\n")
    raw = [names[int(line.split()[0])].strip() for line in (photo.parents[1] / "labels" / f"{photo.stem}.txt")
           .read_text().splitlines() if line.split()]  # fmt: skip
    corrected = [name for name, _ in label_names(photo)]
    assert raw[4] == raw[5] == "4S" and corrected[4] == corrected[5] == "3S"
    assert corrected[:4] + corrected[6:] == raw[:4] + raw[6:]
    assert {key for key in ERRATA if key[0] == photo.stem} == {(photo.stem, 5), (photo.stem, 6)}


def test_a_scene_with_its_hidden_indices_is_the_same_scene() -> None:
    """`scene_with_hidden` draws as `scene` does (training's scenes stay what they were) and adds the indices left
    unlabelled: every marked spot of every piece is either labelled or hidden, never both, unless off the frame."""
    image = np.full((200, 140, 3), 235, dtype=np.uint8)
    spots = ((20, 30), (120, 170), (70, 100))
    piece = Piece(image, tuple((0, float(x), float(y), 30.0) for x, y in spots))
    hidden_seen = 0
    for seed in range(12):
        frame, truths = scene([piece], np.random.default_rng(seed))
        same_frame, same_truths, hidden = scene_with_hidden([piece], np.random.default_rng(seed))
        assert np.array_equal(frame, same_frame) and truths == same_truths
        labelled = {(round(square.x), round(square.y)) for _, square in truths}
        assert not labelled & {(round(square.x), round(square.y)) for square in hidden}
        hidden_seen += len(hidden)
    assert hidden_seen > 0  # pieces overlap and reach the frame's edge in some of these scenes


def test_a_calibration_scene_leaves_partly_covered_indices_unlabelled() -> None:
    """With `shown`, an index whose centre shows but whose square a later piece half covers is hidden, not labelled:
    a read beside it (often the later card's own unlabelled corner) is judged neither right nor wrong. The scene is
    the same; only labels move from labelled to hidden."""
    image = np.full((200, 140, 3), 235, dtype=np.uint8)
    piece = Piece(image, tuple((0, float(x), float(y), 30.0) for x, y in ((20, 30), (120, 170), (70, 100))))
    moved = 0
    for seed in range(12):
        frame, truths = scene([piece], np.random.default_rng(seed))
        same_frame, judged, more_hidden = scene_with_hidden([piece], np.random.default_rng(seed), shown=SHOWN)
        assert np.array_equal(frame, same_frame)
        assert set(judged) <= set(truths)
        assert {square for _, square in truths} - {square for _, square in judged} <= set(more_hidden)
        moved += len(truths) - len(judged)
    assert moved > 0  # later pieces cover part of some labelled squares in these scenes


def test_the_share_of_an_index_square_no_later_piece_covers() -> None:
    owner = np.zeros((100, 100), dtype=np.int32)
    assert share_shown(owner, 0, 50.0, 50.0, 20.0) == 1.0
    owner[:, 50:] = 1  # a later piece over the right half
    assert share_shown(owner, 0, 50.0, 50.0, 20.0) == 0.5
    assert share_shown(owner, 1, 50.0, 50.0, 20.0) == 1.0  # piece 1's square reaching past its edge onto piece 0
    owner[:, :50] = -1  # the table
    assert share_shown(owner, 1, 50.0, 50.0, 20.0) == 1.0
