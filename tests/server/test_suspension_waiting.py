"""How long a suspended table has waited for a pit boss, by the studio's clock: what the pit boss page shows."""

from __future__ import annotations

from studio.clock import ManualClock
from tests.server.conftest import T0, Desk


def test_a_suspended_table_says_since_when_it_waits_and_for_how_long(desk: Desk, clock: ManualClock) -> None:
    desk.to_ready()
    desk.to_dealing()
    clock.advance(7)
    desk.ok("declare-error", json={"kind": "card exposed"})
    clock.advance(45.5)
    suspension = desk.client.get("/api/tables/T1", headers=desk.pit_boss).json()["suspension"]
    assert suspension["since"] == "2024-05-01T12:00:07+00:00" and T0.isoformat() == "2024-05-01T12:00:00+00:00"
    assert suspension["waiting_seconds"] == 45.5
    desk.ok("continue", desk.pit_boss, {})
    assert desk.client.get("/api/tables/T1", headers=desk.pit_boss).json()["suspension"] is None
