"""PyBaccarat (https://pypi.org/project/pybaccarat/), the reference users compare the engine and `studio odds` with:
its bare game loop and, where the installed release has one, its odds calculator. Benchmark-only: it comes with the
`bench` extra (`.venv/bin/pip install -e '.[bench]'`), and each benchmark reports the reference as unavailable, with the
reason, when it is not installed.

Which release: 0.18, the newest, does not install on Linux (its setup.py imports the package, which imports Windows'
`msvcrt` at its top); 0.12 installs (its setup.py does not import it) and holds the same game loop, `Game.play_hand`,
but no odds calculator (`ComputeBaccaratOdds` is in the project's repository only). 0.12's game module still imports
`msvcrt.getch` at its top, for its interactive mode alone (a key press between hands): it is imported here with a
stand-in for `msvcrt` that refuses, which the bare loop never calls, and the stand-in is removed at once.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import sys
import time
import types
from typing import Any

from studio.domain.cards import Card

NOT_INSTALLED = "pybaccarat is not installed: .venv/bin/pip install -e '.[bench]'"
SUITS = {"S": "s", "H": "h", "D": "d", "C": "c"}  # PyBaccarat's suit letters


def version() -> str | None:
    try:
        return importlib.metadata.version("pybaccarat")
    except importlib.metadata.PackageNotFoundError:
        return None


def _refuse_key_press() -> bytes:
    raise OSError("msvcrt stand-in: PyBaccarat's interactive mode is not used by the benchmarks")


def game_module() -> types.ModuleType:
    """`pybaccarat.baccarat` (Game, Hand); ImportError if PyBaccarat is not installed."""
    if importlib.util.find_spec("pybaccarat") is None:
        raise ImportError(NOT_INSTALLED)
    if "msvcrt" in sys.modules or importlib.util.find_spec("msvcrt") is not None:
        return importlib.import_module("pybaccarat.baccarat")  # Windows
    stand_in = types.ModuleType("msvcrt")
    stand_in.getch = _refuse_key_press  # type: ignore[attr-defined]
    sys.modules["msvcrt"] = stand_in
    try:
        return importlib.import_module("pybaccarat.baccarat")
    finally:
        del sys.modules["msvcrt"]  # nothing else may take this machine for Windows


def game_loop(shoes: list[list[Card]], cut_card_from_back: int = 52, burn: int = 6) -> tuple[int, float]:
    """PyBaccarat's bare game loop over the same shoes: per shoe, `burn` cards dealt off, then `Game.play_hand` with
    both hands emptied before each, until the hand that starts with the cut card passed (PyBaccarat's last-hand rule,
    as in its `Game.play`, without the scoreboards, the side counts and the printing). Returns rounds and seconds; the
    shoes are made of PyBaccarat's cards before the clock starts."""
    baccarat = game_module()
    playing_cards = importlib.import_module("pybaccarat.playingcards")
    py_shoes = [playing_cards.Shoe([playing_cards.Card(card.rank.number, SUITS[card.suit.value]) for card in cards])
                for cards in shoes]  # fmt: skip
    rounds = 0
    start = time.perf_counter()
    for shoe, cards in zip(py_shoes, shoes, strict=True):
        shoe.reset()
        shoe.set_cut_card(len(cards) - cut_card_from_back)
        player, banker = baccarat.Hand(), baccarat.Hand()
        game = baccarat.Game(shoe, player, banker)
        for _ in range(burn):
            shoe.deal()
        last_hand = False
        while not last_hand:
            player.empty()
            banker.empty()
            last_hand = shoe.cut_card_seen()
            game.play_hand()
            rounds += 1
    return rounds, time.perf_counter() - start


def odds_calculator() -> Any:
    """PyBaccarat's `ComputeBaccaratOdds` class; ImportError saying why when the installed release has none."""
    installed = version()
    if installed is None:
        raise ImportError(NOT_INSTALLED)
    try:
        module = importlib.import_module("pybaccarat.compute_baccarat_odds")
    except ImportError:
        raise ImportError(f"pybaccarat {installed} has no odds calculator (pybaccarat.compute_baccarat_odds: in the "
                          "project's repository, in no release that installs on Linux)") from None  # fmt: skip
    return module.ComputeBaccaratOdds
