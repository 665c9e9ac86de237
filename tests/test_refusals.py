"""Refusals read as sentences a person would say: every command has a verb, every phase a description, and no
sentence names a class or a phase by its code."""

from __future__ import annotations

import inspect

import pytest

from studio.domain import commands as c
from studio.domain.errors import ProcedureError
from studio.domain.procedure import Phase, expected_commands
from studio.domain.refusals import SITUATIONS, VERBS, sentence

COMMANDS = [cls.__name__ for _, cls in inspect.getmembers(c, inspect.isclass)
            if issubclass(cls, c.Command) and cls is not c.Command]  # fmt: skip


def test_every_command_has_a_verb_and_every_phase_a_description() -> None:
    assert sorted(COMMANDS) == sorted(VERBS)
    assert sorted(phase.value for phase in Phase) == sorted(SITUATIONS)


@pytest.mark.parametrize("phase", list(Phase), ids=lambda phase: phase.value)
@pytest.mark.parametrize("command", COMMANDS)
def test_no_refusal_names_a_class_or_a_phase_code(phase: Phase, command: str) -> None:
    text = sentence(ProcedureError(phase.value, command, "not allowed now", expected_commands(phase)))
    assert text[0].isupper() and text.endswith(".")
    assert not any(name in text for name in COMMANDS) and "_" not in text


def test_the_pit_boss_hears_that_the_suspension_is_over() -> None:
    error = ProcedureError("ready", "ContinuePlay", "not allowed now", expected_commands(Phase.READY))
    assert sentence(error) == (
        "This table is not suspended any more: there is nothing to continue (the table is between rounds)."
    )


def test_a_command_out_of_its_phase_says_where_the_table_is_and_what_it_takes() -> None:
    error = ProcedureError(
        "awaiting_shuffle", "CloseBetting", "not allowed now", expected_commands(Phase.AWAITING_SHUFFLE)
    )
    assert sentence(error) == (
        'You cannot call "no more bets" now: the shoe is waiting to be shuffled; now you can confirm the shuffle, '
        "approve the deck inspection, replace a deck, change the dealer or close the table."
    )


def test_a_handler_reason_is_kept_as_the_reason() -> None:
    error = ProcedureError("suspended", "VoidRound", "no round is in play; continue instead")
    assert sentence(error) == "You cannot void the round: no round is in play; continue instead."
