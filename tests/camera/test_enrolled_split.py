"""bench/enrolled_split.py: the studio deck enrolled from one half of its training photos, read on the other's."""

from __future__ import annotations

import hashlib

from bench.enrolled_split import COUNTS, enrolled_split, half_of, training_boxes


def test_the_halves_are_fixed_by_the_photos_name_and_both_hold_photos() -> None:
    photos = {box.image.name for box in training_boxes()}
    halves = {name: half_of(f"images/train/{name}") for name in photos}
    assert all(half == hashlib.sha256(name.encode()).digest()[0] % 2 for name, half in halves.items())
    assert all(half_of(f"elsewhere/{name}") == half for name, half in halves.items())  # the name, not the folder
    evens = sum(1 for half in halves.values() if half == 0)
    assert 0.3 * len(photos) <= evens <= 0.7 * len(photos)


def test_every_rendered_card_is_scored_once_and_none_of_the_enrolled_half_is_rendered() -> None:
    result = enrolled_split(frames=1, seed_offset=0)
    for size in ("1280x720", "1920x1080"):
        counts = result[size]
        assert counts["cards"] == 6 * 2  # six cards a render, one render a size for each half
        assert sum(counts[key] for key in COUNTS) == counts["cards"]
    # the deck enrolled from one half is read on renders of the other half's cards, never of its own
    in_half = [sum(1 for box in training_boxes() if half_of(box.image.name) == half) for half in (0, 1)]
    assert in_half[0] != in_half[1]  # else the check below could not tell the halves apart
    assert [result["halves"][half]["rendered_cards"] for half in (0, 1)] == [in_half[1], in_half[0]]
