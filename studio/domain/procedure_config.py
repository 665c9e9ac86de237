"""The numbers of the studio procedure, every one configurable per table (defaults from the seeds, section 3)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ProcedureConfig:
    decks: int = 8
    cut_card_from_back: int = 52  # the cut card goes in front of the last 52 cards: one deck from the back
    burn_after_shuffle: int = 6
    burn_after_error: int = 3  # with the pit boss's approval, before play resumes
    burn_after_dealer_change: int = 1  # before the next round
    betting_seconds: int = 15
    betting_seconds_after_error: int = 15  # betting time given back when betting resumes after an error (0: none)
    warning_seconds: int = 5  # the light turns yellow when this many seconds are left
    allow_early_close: bool = False  # may the dealer call "no more bets" before the timer ends?
    one_more_hand: bool = False  # house option: one more round after the hand in which the cut card appears
    allow_early_shuffle: bool = True  # may a pit boss end the shoe after any completed round (seed 000 §3.2.3)?
    inspect_decks: bool = False  # record each shoe's deck inspections, start and end, before the next shuffle?
    seats: int = 0  # players' seats at the table (seed 004: five); 0: no seats, anyone may bet (set by [table] seats)

    @property
    def shoe_size(self) -> int:
        return 52 * self.decks
