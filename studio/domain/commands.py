"""Commands: what dealers, pit bosses, devices and the supervisor ask of a table. Imperative names.

Every command names its actor (`studio.domain.roles.Actor`); given as the text "role:name" (`dealer:alice`,
`pit_boss:bob`, `device:shoe-1`, `system:sim`), it is read into one when the command is made, and a text that is not
one is refused there. Whether a command is allowed, and what follows, is decided by `studio.domain.procedure.decide`.
"""

from __future__ import annotations

from dataclasses import dataclass

from studio.domain.cards import Card
from studio.domain.roles import Actor


@dataclass(frozen=True, slots=True)
class CardRead:
    """One card as a device (or a person keying it in) reported it. `card` is None when it could not be read.

    A camera's read also names its evidence: `raw` is the path of the card's crop (PNG), `evidence_sha256` the
    SHA-256 of that file and `evidence_boxes_sha256` that of the JSON beside it (the frame's size and boxes), so the
    log, hash-chained, makes the files tamper-evident too.
    """

    card: Card | None
    source: str
    device_seq: int | None = None
    confidence: float | None = None
    raw: str | None = None  # the device's own bytes (hex) or a reference to the camera crop
    evidence_sha256: str | None = None  # hex SHA-256 of the camera's crop
    evidence_boxes_sha256: str | None = None  # hex SHA-256 of the crop's JSON sidecar (frame size, boxes)
    device_session: str | None = None  # what `device_seq` counts within: a boot of the device, an opening of a camera


@dataclass(frozen=True, slots=True)
class Command:
    actor: Actor

    def __post_init__(self) -> None:
        if isinstance(self.actor, str):  # the log's form, as the command line and the tests write it
            object.__setattr__(self, "actor", Actor.parse(self.actor))


@dataclass(frozen=True, slots=True)
class ConfirmShuffle(Command):
    """The dealer confirms the shuffle of a new shoe."""


@dataclass(frozen=True, slots=True)
class PlaceCutCard(Command):
    cards_in_front: int | None = None  # None: one deck from the back, as configured


@dataclass(frozen=True, slots=True)
class DrawCard(Command):
    read: CardRead


@dataclass(frozen=True, slots=True)
class ReportCutCard(Command):
    """The cut card came out of the shoe (reported by the shoe or by the dealer)."""

    source: str = "dealer"


@dataclass(frozen=True, slots=True)
class OpenBetting(Command):
    pass


@dataclass(frozen=True, slots=True)
class CloseBetting(Command):
    """'No more bets'. At a table with seats, `bettors` are the players with a bet in the round, as the ledger says
    when betting closes (the studio fills it in); every active seated player who neither bet nor passed sits the round
    out. None: nobody is known to have bet."""

    bettors: frozenset[str] | None = None


@dataclass(frozen=True, slots=True)
class ChangeDealer(Command):
    dealer: str
    display_name: str | None = None  # what players are shown; never the account name


@dataclass(frozen=True, slots=True)
class DeclareError(Command):
    """The dealer declares an error: card exposed, dropped, dealt to the wrong hand, misdeal."""

    kind: str
    detail: str = ""


@dataclass(frozen=True, slots=True)
class ReportSourceFailure(Command):
    source: str
    detail: str = ""


@dataclass(frozen=True, slots=True)
class ReportDisagreement(Command):
    """Two sources reported different cards for the same draw."""

    detail: str
    reads: tuple[CardRead, ...] = ()


@dataclass(frozen=True, slots=True)
class CorrectCard(Command):
    """Pit boss: `position` 1.. is a card already dealt this round (in dealing order); 0 is the read that suspended
    the table."""

    position: int
    card: Card
    reason: str


@dataclass(frozen=True, slots=True)
class ContinuePlay(Command):
    """Pit boss: the error is resolved; play continues after the error burn."""

    reason: str = ""


@dataclass(frozen=True, slots=True)
class VoidRound(Command):
    """Pit boss: the round is voided and every stake refunded."""

    reason: str


@dataclass(frozen=True, slots=True)
class CloseTable(Command):
    """Pit boss: no more rounds at this table until it is opened again (between rounds or shoes)."""

    reason: str


@dataclass(frozen=True, slots=True)
class OpenTable(Command):
    """Pit boss: the table plays again, where it was when it closed."""


@dataclass(frozen=True, slots=True)
class OrderShuffle(Command):
    """Pit boss: the shoe ends now, between rounds, and the dealer reshuffles (seed 000 §3.2.3)."""

    reason: str


@dataclass(frozen=True, slots=True)
class InspectDecks(Command):
    """Pit boss: approves the inspection of the decks that is due (the ended shoe's, then the next shoe's), made by
    `dealer` ("name" or "dealer:name"; None: the dealer on duty)."""

    dealer: str | None = None


@dataclass(frozen=True, slots=True)
class ReplaceDeck(Command):
    """Pit boss: during an inspection, a damaged or incomplete deck is replaced (`deck` names it, `reason` says why)."""

    deck: str
    reason: str


# Seats (seed 004): a game server seats its players, who bet only from their seat at a table with seats.


@dataclass(frozen=True, slots=True)
class TakeSeat(Command):
    """A game server seats its player `player_id`, shown to the table as `nickname`, in `seat` (None: the first free
    seat). Taken while a round is under way, the seat plays from the next round."""

    player_id: str
    nickname: str
    seat: int | None = None


@dataclass(frozen=True, slots=True)
class ChangeSeat(Command):
    """A game server moves its seated player to the free seat `seat` (between rounds, or while the player has no part
    in the round under way)."""

    player_id: str
    seat: int


@dataclass(frozen=True, slots=True)
class LeaveSeat(Command):
    """A game server's seated player leaves the table (between rounds, or while the player has no part in the round
    under way)."""

    player_id: str


@dataclass(frozen=True, slots=True)
class PassRound(Command):
    """A seated player passes the round in betting (seed 004, "Passe"). `open_bets` is how many open bets the ledger
    holds for them in this round (the studio fills it in): a player with bets undoes them before passing."""

    player_id: str
    open_bets: int = 0
