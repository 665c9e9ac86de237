"""Refusals as sentences a person would say: what a `ProcedureError` means to the croupier or the pit boss in front of
the table, never a command's class name.

Rules held here: every command the procedure knows has a verb ("continue play", "void the round"), every phase a
description ("the table is between rounds"); a command the phase does not take at all is explained by where the table
is ("this table is not suspended any more: there is nothing to continue"), a command the phase takes but refuses by
the handler's own reason, which is already a sentence. The machine fields (`phase`, `command`, `reason`, `expected`)
stay as they are for API clients; this is what people read.
"""

from __future__ import annotations

from studio.domain.errors import ProcedureError

# What each command asks for, as a verb phrase ("you cannot <verb> now").
VERBS: dict[str, str] = {
    "ConfirmShuffle": "confirm the shuffle",
    "PlaceCutCard": "place the cut card",
    "DrawCard": "take a card",
    "ReportCutCard": "report the cut card",
    "OpenBetting": "open betting",
    "CloseBetting": 'call "no more bets"',
    "ChangeDealer": "change the dealer",
    "DeclareError": "declare an error",
    "ReportSourceFailure": "report a card reader failure",
    "ReportDisagreement": "report the card readers disagreeing",
    "CorrectCard": "correct a card",
    "ContinuePlay": "continue play",
    "VoidRound": "void the round",
    "CloseTable": "close the table",
    "OpenTable": "open the table",
    "OrderShuffle": "order a shuffle",
    "InspectDecks": "approve the deck inspection",
    "ReplaceDeck": "replace a deck",
    "TakeSeat": "seat a player",
    "ChangeSeat": "move a player to another seat",
    "LeaveSeat": "let a player leave their seat",
    "PassRound": "pass the round",
}

# Where the table is, as the end of "... now: <situation>".
SITUATIONS: dict[str, str] = {
    "awaiting_shuffle": "the shoe is waiting to be shuffled",
    "awaiting_cut": "the shoe is waiting for its cut card",
    "burning": "cards are being burned",
    "ready": "the table is between rounds",
    "betting_open": "betting is open",
    "dealing": "a round is being dealt",
    "suspended": "the table is suspended and waits for a pit boss",
    "closed": "the table is closed",
}

# The pit boss's decisions, refused because the suspension is over: what there is nothing to do any more.
DECISIONS: dict[str, str] = {
    "CorrectCard": "no card to correct",
    "ContinuePlay": "nothing to continue",
    "VoidRound": "no round to void",
}

GENERIC_REASON = "not allowed now"  # the reason `decide` gives for a command its phase does not list


def verb(command: str) -> str:
    return VERBS.get(command, "do that")


def situation(phase: str) -> str:
    return SITUATIONS.get(phase, f"the table is in phase {phase}")


def sentence(error: ProcedureError) -> str:
    """The refusal as a person would say it, capitalised and ending with a full stop."""
    if error.reason == GENERIC_REASON:
        if error.command in DECISIONS and error.phase != "suspended":
            text = f"this table is not suspended any more: there is {DECISIONS[error.command]}"
            text += f" ({situation(error.phase)})"
        else:
            allowed = [VERBS[name] for name in error.expected if name in VERBS and name not in _QUIET]
            text = f"you cannot {verb(error.command)} now: {situation(error.phase)}"
            if allowed:
                text += f"; now you can {_either(allowed)}"
    else:
        text = f"you cannot {verb(error.command)}: {error.reason}"
    text = text[0].upper() + text[1:]
    return text if text.endswith((".", "!", "?")) else f"{text}."


# Commands every phase lists that a person need not be told of (devices and game servers send them).
_QUIET = frozenset({"DrawCard", "ReportSourceFailure", "ReportDisagreement", "TakeSeat", "ChangeSeat", "LeaveSeat",
                    "PassRound"})  # fmt: skip


def _either(verbs: list[str]) -> str:
    return verbs[0] if len(verbs) == 1 else f"{', '.join(verbs[:-1])} or {verbs[-1]}"
