"""Seats at a table (seed 004: "chaque table peut recevoir cinq joueurs et le banquier"): who sits where, what each
seated player does in the round under way, and who may bet.

Rules held here (the seat commands themselves are decided in `studio.domain.procedure`):
- At a table with seats (`ProcedureConfig.seats` > 0), only a seated player bets, and only in a round they play: not
  in the round during which they took their seat (they wait for the next), not after passing it. A table without
  seats takes anyone's bets, as before.
- What the table is shown of a seat is its number, the player's nickname and their status in the round; never the
  player's id or their game server (other operators' players are not theirs to see).
"""

from __future__ import annotations

from typing import Any

from studio.domain.procedure import Phase, Seat, TableState, seat_of

# A seated player's status, as the table is shown it.
SEATED = "seated"  # between rounds: plays the next round
WAITING = "waiting"  # took the seat while this round was under way: plays from the next
BETTING = "betting"  # betting is open: may bet or pass
PLAYING = "playing"  # betting has closed and the player bet
PASSED = "passed"  # passed this round
SAT_OUT = "sat_out"  # neither bet nor passed before betting closed


def betting_open(state: TableState) -> bool:
    """Whether the round under way has not reached "no more bets" yet (also while an error interrupts its betting)."""
    if state.phase is Phase.BETTING_OPEN:
        return True
    if state.phase is Phase.SUSPENDED and state.suspension is not None:
        return state.suspension.resume is Phase.BETTING_OPEN
    return state.phase is Phase.BURNING and state.burn is not None and state.burn.then is Phase.BETTING_OPEN


def seat_status(state: TableState, seat: Seat) -> str:
    current = state.round
    if current is None:
        return SEATED
    if current.number < seat.first_round:
        return WAITING
    if seat.passed == current.number:
        return PASSED
    if seat.sat_out == current.number:
        return SAT_OUT
    return BETTING if betting_open(state) else PLAYING


def seats_view(state: TableState) -> list[dict[str, Any]] | None:
    """Every seat of the table, free or not, as players may see it (None for a table without seats): the seat number,
    the nickname and the status (`free` for an empty seat)."""
    if not state.config.seats:
        return None
    taken = {seat.number: seat for seat in state.seats}
    numbers = sorted(set(range(1, state.config.seats + 1)) | set(taken))  # a seat kept after the table shrank
    return [{"seat": number, "nickname": taken[number].nickname, "status": seat_status(state, taken[number])}
            if number in taken else {"seat": number, "nickname": None, "status": "free"}
            for number in numbers]  # fmt: skip


def bet_refusal(state: TableState, player_id: str) -> str | None:
    """Why `player_id` may not bet at this table now, or None if they may (always None at a table without seats)."""
    if not state.config.seats:
        return None
    seat = seat_of(state, player_id)
    if seat is None:
        return f"only a seated player bets at this table: {player_id} has no seat"
    current = state.round
    if current is not None and current.number < seat.first_round:
        return (f"{player_id} took seat {seat.number} during round {current.number}: they bet from round "
                f"{seat.first_round}")  # fmt: skip
    if current is not None and seat.passed == current.number:
        return f"{player_id} passed round {current.number}"
    return None
