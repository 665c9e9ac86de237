"""The stability rule, frame by frame, without images: when a card seen by the camera becomes a card or a misread."""

from __future__ import annotations

import pytest

from drivers.camera.stability import Decision, Sighting, StabilityTracker

BOX = (100, 100, 120, 170)
OTHER_BOX = (400, 100, 120, 170)


def seen(code: str, confidence: float = 0.95, box: tuple[int, int, int, int] = BOX, zone: str | None = None
         ) -> Sighting[str]:  # fmt: skip
    return Sighting(code, confidence, box, zone, evidence=f"{code}@{confidence}")


def run(tracker: StabilityTracker[str], frames: list[list[Sighting[str]]]) -> list[tuple[int, Decision[str]]]:
    """(frame number from 1, decision) for every decision taken."""
    return [(number, decision) for number, frame in enumerate(frames, 1) for decision in tracker.update(frame)]


def test_a_card_is_confirmed_after_n_alike_confident_frames_and_only_once() -> None:
    decisions = run(StabilityTracker(stable_frames=3), [[seen("QH")]] * 8)
    assert [(number, d.confirmed, d.code) for number, d in decisions] == [(3, True, "QH")]
    assert decisions[0][1].confidence == 0.95
    assert decisions[0][1].evidence == "QH@0.95"


def test_a_frame_without_the_card_restarts_its_count() -> None:
    frames = [[seen("QH")], [seen("QH")], [], [seen("QH")], [seen("QH")], [seen("QH")]]
    decisions = run(StabilityTracker(stable_frames=3, clear_after=2), frames)
    assert [(number, d.code) for number, d in decisions] == [(6, "QH")]


def test_a_changing_read_is_not_confirmed_until_it_settles() -> None:
    frames = [[seen("QH")], [seen("QD")], [seen("QH")], [seen("QH")], [seen("QH")]]
    decisions = run(StabilityTracker(stable_frames=3, misread_after=9), frames)
    assert [(number, d.confirmed, d.code) for number, d in decisions] == [(5, True, "QH")]


def test_a_read_alike_but_never_sure_is_a_misread_with_the_best_guess() -> None:
    frames = [[seen("QH", 0.4)], [seen("QH", 0.5)], [seen("QH", 0.45)], [seen("QH", 0.99)]]
    decisions = run(StabilityTracker(stable_frames=3, min_confidence=0.8), frames)
    assert len(decisions) == 1
    number, decision = decisions[0]
    assert number == 3 and not decision.confirmed and decision.code == "QH"
    assert decision.confidence == 0.5
    assert "best guess QH" in decision.detail and "never surely" in decision.detail


def test_a_read_that_keeps_changing_is_a_misread_after_the_limit() -> None:
    codes = ["QH", "QD", "KH", "QH", "QD", "QH"]
    frames = [[seen(code, 0.9 if code == "QH" else 0.6)] for code in codes]
    decisions = run(StabilityTracker(stable_frames=3, misread_after=6), frames)
    assert [(number, d.confirmed) for number, d in decisions] == [(6, False)]
    detail = decisions[0][1].detail
    assert "best guess QH" in detail and "QH x3" in detail and "QD x2" in detail and "KH x1" in detail


def test_a_rank_without_its_suit_is_never_a_card() -> None:
    decisions = run(StabilityTracker(stable_frames=2, misread_after=4), [[seen("Q?", 1.0)]] * 5)
    assert [(number, d.confirmed, d.code) for number, d in decisions] == [(4, False, "Q?")]


def test_one_low_confidence_frame_delays_but_does_not_spoil_a_card() -> None:
    frames = [[seen("9S", 0.95)], [seen("9S", 0.5)], [seen("9S", 0.95)], [seen("9S", 0.95)], [seen("9S", 0.95)]]
    decisions = run(StabilityTracker(stable_frames=3, min_confidence=0.8), frames)
    assert [(number, d.confirmed) for number, d in decisions] == [(5, True)]


def test_cards_are_followed_by_place_and_zone() -> None:
    tracker: StabilityTracker[str] = StabilityTracker(stable_frames=2)
    player, banker = seen("QH", zone="player"), seen("9S", box=OTHER_BOX, zone="banker")
    assert tracker.update([player, banker]) == []
    decisions = tracker.update([banker, player])
    assert sorted(d.code for d in decisions) == ["9S", "QH"]
    assert tracker.cards_in_view == 2
    # the same box in another zone is another card
    assert tracker.update([seen("KD", zone="banker")]) == []


def test_a_card_taken_away_and_another_dealt_there_is_reported_again() -> None:
    frames = [[seen("QH")]] * 3 + [[]] * 2 + [[seen("KH")]] * 3 + [[seen("KH")]]
    decisions = run(StabilityTracker(stable_frames=3, clear_after=2), frames)
    assert [(number, d.code) for number, d in decisions] == [(3, "QH"), (8, "KH")]


def test_settings_are_checked() -> None:
    with pytest.raises(ValueError, match="stable_frames"):
        StabilityTracker(stable_frames=0)
    with pytest.raises(ValueError, match="min_confidence"):
        StabilityTracker(min_confidence=1.5)
