"""Table chat: the profanity and length filter, mutes by pit bosses, and the chat API."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from dealer_ui.app import create_app
from dealer_ui.runtime import StudioSettings
from studio.chat_store import ChatStore
from studio.clock import ManualClock
from studio.domain.chat import ChatFilter, ChatRejected


@pytest.mark.parametrize(
    ("said", "shown"),
    [
        ("good luck everyone", "good luck everyone"),
        ("this table is RIGGED", "this table is R*****"),
        ("what a c h e a t", "what a c********"),
        ("scaaaam!", "s******!"),
        ("scampi for dinner", "scampi for dinner"),  # whole words only
        ("  spaces\u0007 trimmed  ", "spaces trimmed"),
    ],
)
def test_the_filter_masks_blocked_words(said: str, shown: str) -> None:
    assert ChatFilter().moderate(said).text == shown


@pytest.mark.parametrize("said", ["", "   ", "\u0000\u0007", "x" * 201])
def test_empty_or_long_messages_are_refused(said: str) -> None:
    with pytest.raises(ChatRejected):
        ChatFilter().moderate(said)


def test_muted_players_are_refused_and_moderators_see_what_was_typed(tmp_path: Path) -> None:
    store = ChatStore(f"sqlite:///{tmp_path / 'chat.db'}", ManualClock(datetime(2026, 11, 29, tzinfo=UTC)))
    store.say("T1", "gs1", "p1", "Ann", "you idiot")
    store.mute("p1", "pit_boss:bob", "insults")
    with pytest.raises(ChatRejected, match="muted"):
        store.say("T1", "gs1", "p1", "Ann", "hello")
    (public,) = store.messages("T1")
    assert public["shown"] == "you i****" and "received" not in public
    (moderated,) = store.messages("T1", moderator=True)
    assert moderated["received"] == "you idiot"
    store.unmute("p1")
    store.say("T1", "gs1", "p1", "Ann", "sorry")
    assert [m["shown"] for m in store.messages("T1")] == ["you i****", "sorry"]
    store.close()


def test_chat_api(tmp_path: Path) -> None:
    app = create_app(StudioSettings(database=str(tmp_path / "s.db"), demo=True))
    with TestClient(app) as client:
        key = app.state.studio.users.add_api_key("gs1")
        server = {"X-API-Key": key}
        said = client.post("/api/tables/T1/chat", json={"player_id": "p1", "nickname": "Ann", "text": "so rigged"},
                           headers=server)  # fmt: skip
        assert said.status_code == 201 and said.json()["shown"] == "so r*****"
        too_long = {"player_id": "p1", "nickname": "Ann", "text": "x" * 300}
        assert client.post("/api/tables/T1/chat", json=too_long, headers=server).status_code == 422
        client.post("/api/login", json={"name": "dealer", "password": "dealer"})
        assert client.post("/api/tables/T1/chat/mute", json={"player_id": "p1", "reason": "x"}).status_code == 403
        assert client.get("/api/tables/T1").json()["chat"][0]["shown"] == "so r*****"  # the console shows it
        client.post("/api/login", json={"name": "pitboss", "password": "pitboss"})
        assert client.post("/api/tables/T1/chat/mute", json={"player_id": "p1", "reason": "abuse"}).status_code == 200
        client.cookies.clear()
        muted = client.post("/api/tables/T1/chat", json={"player_id": "p1", "nickname": "Ann", "text": "hi"},
                            headers=server)  # fmt: skip
        assert muted.status_code == 403 and "muted" in muted.json()["detail"]
