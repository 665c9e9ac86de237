"""Settlement of one round with 10,000 bets from 2,000 players on SQLite (WAL, synchronous=FULL), in one transaction.

Run as `.venv/bin/python bench/settlement_bench.py [--bets 10000] [--players 2000] [--dir DIR]`; prints one JSON
object. Target: <= 1 s for the default sizes.
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path

from studio.betting import BettingService
from studio.clock import ManualClock
from studio.domain.cards import parse_cards
from studio.domain.paytable import BetType
from studio.domain.rules import outcome
from studio.settings import load_table_config
from studio.wallets import PlacedBet, WalletStore

PLAYERS = 2_000
BETS = 10_000
TARGET_SECONDS = 1.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dir", help="folder for the database (default: a temporary one)")
    parser.add_argument("--bets", type=int, default=BETS, help=f"bets in the round (default: {BETS})")
    parser.add_argument("--players", type=int, default=PLAYERS, help=f"players placing them (default: {PLAYERS})")
    parser.add_argument(
        "--database",
        metavar="URL",
        help="another database, e.g. postgresql+psycopg://studio@db/bench "
        "(default: a SQLite file in a temporary folder); each run uses players and a round of its own",
    )
    args = parser.parse_args()
    if not 1 <= args.players <= args.bets:
        parser.error("--players: at least 1 and at most --bets")
    table = load_table_config()
    rng = random.Random(5)
    with tempfile.TemporaryDirectory(dir=args.dir) as folder:
        clock = ManualClock(datetime(2026, 11, 29, 12, tzinfo=UTC))
        wallets = WalletStore(args.database or f"sqlite:///{Path(folder) / 'ledger.db'}", clock)
        betting = BettingService("T1", wallets, table.limits, table.pay_table, clock)
        run = uuid.uuid4().hex[:8]
        players = [f"player-{run}-{n:04d}" for n in range(args.players)]
        for player in players:
            wallets.deposit(player, "gs1", 1_000_000)
        game_id = f"T1-20261129-120000-{run}"
        start = time.perf_counter()
        for n in range(args.bets):  # placed straight into the ledger: this benchmark times settlement
            bet_type = rng.choice(list(BetType))
            limit = table.limits.bets[bet_type]
            stake = rng.randint(limit.minimum, limit.maximum) // 100 * 100
            wallets.place(PlacedBet(f"bet-{run}-{n}", "gs1", players[n % args.players], "T1", game_id, bet_type, stake))
        placing = time.perf_counter() - start
        result = outcome(parse_cards("QH 2C"), parse_cards("9D 9S"))  # Banker natural 8 with a pair of nines
        start = time.perf_counter()
        settled = betting.settle_round(game_id, result)
        seconds = time.perf_counter() - start
        assert settled
        conserved = all(wallets.balance(p) == wallets.ledger_sum(p) for p in players[:50])
        wallets.close()
    print(json.dumps({"bets": args.bets, "players": args.players, "settle_seconds": round(seconds, 3),
                      "target_seconds": TARGET_SECONDS, "place_ms_per_bet": round(placing / args.bets * 1000, 3),
                      "balances_equal_ledger": conserved}))  # fmt: skip


if __name__ == "__main__":
    main()
