"""Every result on the results feed carries the roads of its shoe as they stand after it, live and on resume."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient

from dealer_ui.app import create_app
from dealer_ui.runtime import StudioSettings

HANDS = ["QH 9D 2C 10S", "9C KS 9S AH", "KH KD 8C 7D"]  # Banker 9, Player natural 8, Player natural 8


def test_results_carry_the_roads_live_and_from_the_log(tmp_path: Path) -> None:
    table = tmp_path / "t1.toml"
    table.write_text('[table]\nid = "T1"\n[procedure]\nburn_after_shuffle = 0\nallow_early_close = true\n')
    app = create_app(StudioSettings(database=str(tmp_path / "s.db"), demo=True, table_files=(table,)))
    with TestClient(app) as client:
        server = {"X-API-Key": app.state.studio.users.add_api_key("gs1")}
        client.post("/api/login", json={"name": "dealer", "password": "dealer"})
        client.post("/api/tables/T1/shuffle")
        client.post("/api/tables/T1/cut", json={})
        with client.websocket_connect("/ws/feed/T1?after=0", headers=server) as feed:
            for hand in HANDS[:3]:
                client.post("/api/tables/T1/open-betting")
                client.post("/api/tables/T1/close-betting")
                for code in hand.split():
                    client.post("/api/tables/T1/card", json={"card": code})
            live = []
            while len(live) < 3:
                message = feed.receive_json()
                if message["type"] == "result":
                    live.append(message)
        assert [m["roads"]["bead_plate"] for m in live] == ["B", "BP", "BPP"]
        assert live[-1]["roads"]["big_road"] == [[["B", 0]], [["P", 0], ["P", 0]]]
        # B P P: the big eye boy starts at the second cell of column 2; column 1 ends just above that row: blue
        # (the first mark of B P P P B, worked by hand in tests/test_roads.py).
        assert live[-1]["roads"]["big_eye_boy"] == "b"
        assert set(live[-1]["roads"]["ask"]) == {"banker", "player"}
        # A client resuming from the log sees the same roads on the same results.
        page = client.get("/api/feed/T1?after=0", headers=server).json()["messages"]
        assert [m["roads"] for m in page if m["type"] == "result"] == [m["roads"] for m in live]
        # And the table's roads (the API's full form) agree with the last result's compact form.
        roads = client.get("/api/tables/T1/roads", headers=server).json()
        assert "".join(roads["bead_plate"]) == live[-1]["roads"]["bead_plate"]
        assert roads["counts"] == live[-1]["roads"]["counts"]
