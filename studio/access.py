"""Staff access: the access policy (sessions by role, lockout, HTTPS) and the access log.

Rules held here:
- The access log is a stream of the studio's event log (`ACCESS_STREAM`), in the same store and on the same hash chain
  as the tables' logs: append-only, and checked by `studio log verify`. Its name can never be a table's (a table id
  starts with a letter or a digit).
- Every record names who (`actor`, and `name` for the account concerned), from where (`address`), when (`at`) and what
  (`kind`, past tense, and its fields). A failed sign-in names the name that was tried and never says whether an
  account has it.
- Several processes share the stream (every table process signs people in): an append that lost the race to another
  process is made again on the new head, so nothing is lost and the chain never forks.
- The policy is read from a TOML file (`config/access.toml` is the default); every number has a default.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

from studio.domain.errors import ConfigError
from studio.domain.records import ConcurrentAppend, NewRecord, Record
from studio.domain.roles import Role
from studio.ports import Clock, EventStore

ACCESS_STREAM = "_access"
APPEND_TRIES = 50  # appends that lose the race to another process before giving up (each race is milliseconds)
MAX_MINUTES = 7 * 24 * 60

# The kinds of record the access log holds.
SIGNED_IN = "SignedIn"
SIGN_IN_FAILED = "SignInFailed"
SIGN_IN_REFUSED = "SignInRefused"  # a sign-in tried during a lockout: the password was not even checked
ACCOUNT_LOCKED = "AccountLocked"
ADDRESS_LOCKED = "AddressLocked"
ACCOUNT_UNLOCKED = "AccountUnlocked"
SIGNED_OUT = "SignedOut"
SESSION_EXPIRED = "SessionExpired"
SESSION_REPLACED = "SessionReplaced"  # ended because the same person signed in elsewhere (single session)
API_KEY_CREATED = "ApiKeyCreated"
API_KEY_REVOKED = "ApiKeyRevoked"
API_KEY_REFUSED = "ApiKeyRefused"
ACCOUNT_CREATED = "AccountCreated"
ACCOUNT_CHANGED = "AccountChanged"
RECORDS_EXPORTED = "RecordsExported"
ACCESS_LOG_EXPORTED = "AccessLogExported"


@dataclass(frozen=True, slots=True)
class RoleSessions:
    """How long a session of one role lasts, how long it may sit idle, and whether a new sign-in ends the older one."""

    length: timedelta
    idle: timedelta
    single: bool = False


DEFAULT_SESSIONS: Mapping[Role, RoleSessions] = {
    Role.DEALER: RoleSessions(timedelta(hours=9), timedelta(minutes=30)),
    Role.PIT_BOSS: RoleSessions(timedelta(hours=9), timedelta(minutes=15)),
    Role.SURVEILLANCE: RoleSessions(timedelta(hours=9), timedelta(minutes=15)),
    Role.ADMIN: RoleSessions(timedelta(hours=1), timedelta(minutes=10), single=True),
}


@dataclass(frozen=True, slots=True)
class AccessPolicy:
    sessions: Mapping[Role, RoleSessions] = field(default_factory=lambda: dict(DEFAULT_SESSIONS))
    max_failures: int = 5  # failed sign-ins of one account within `window` that lock it
    window: timedelta = timedelta(minutes=15)
    lockout: timedelta = timedelta(minutes=15)
    address_failures: int = 20  # failed sign-ins (any names) or API keys from one address within `window`
    min_password: int = 10  # `studio users add` outside demo mode
    https: bool = False  # served over HTTPS (behind a reverse proxy): session cookies are marked Secure

    def for_role(self, role: Role) -> RoleSessions:
        return self.sessions.get(role, DEFAULT_SESSIONS[Role.ADMIN])


def _minutes(table: Mapping[str, Any], key: str, default: timedelta, where: str) -> timedelta:
    value = table.get(key, default.total_seconds() / 60)
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= MAX_MINUTES:
        raise ConfigError(f"{where}.{key}: minutes from 0 to {MAX_MINUTES}, not {value!r}")
    return timedelta(minutes=value)


def _count(table: Mapping[str, Any], key: str, default: int, where: str) -> int:
    value = table.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 10_000:
        raise ConfigError(f"{where}.{key}: a whole number from 1 to 10000, not {value!r}")
    return value


def policy_from_mapping(data: Mapping[str, Any], where: str = "access") -> AccessPolicy:
    """The policy a TOML document describes (see config/access.toml); what it leaves out keeps its default."""
    known = {"sessions", "lockout", "passwords", "server"}
    if unknown := set(data) - known:
        names = ", ".join(sorted(unknown))
        raise ConfigError(f"{where}: unknown section(s) {names} (known: {', '.join(sorted(known))})")
    sessions = dict(DEFAULT_SESSIONS)
    for role_name, table in dict(data.get("sessions", {})).items():
        try:
            role = Role(role_name)
        except ValueError:
            raise ConfigError(f"{where}.sessions.{role_name}: not a role of people") from None
        if role is Role.GAME_SERVER or not isinstance(table, dict):
            raise ConfigError(f"{where}.sessions.{role_name}: not a role of people")
        rule = sessions[role]
        single = table.get("single_session", rule.single)
        if not isinstance(single, bool):
            raise ConfigError(f"{where}.sessions.{role_name}.single_session: true or false, not {single!r}")
        sessions[role] = RoleSessions(
            _minutes(table, "length_minutes", rule.length, f"{where}.sessions.{role_name}"),
            _minutes(table, "idle_minutes", rule.idle, f"{where}.sessions.{role_name}"),
            single,
        )
    lockout = dict(data.get("lockout", {}))
    passwords = dict(data.get("passwords", {}))
    server = dict(data.get("server", {}))
    base = AccessPolicy()
    https = server.get("https", False)
    if not isinstance(https, bool):
        raise ConfigError(f"{where}.server.https: true or false, not {https!r}")
    return AccessPolicy(
        sessions,
        _count(lockout, "failures", base.max_failures, f"{where}.lockout"),
        _minutes(lockout, "window_minutes", base.window, f"{where}.lockout"),
        _minutes(lockout, "lock_minutes", base.lockout, f"{where}.lockout"),
        _count(lockout, "address_failures", base.address_failures, f"{where}.lockout"),
        _count(passwords, "min_length", base.min_password, f"{where}.passwords"),
        https,
    )


def load_access_policy(path: Path | None) -> AccessPolicy:
    """The policy in `path`; the defaults when `path` is None."""
    if path is None:
        return AccessPolicy()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise ConfigError(f"{path}: cannot read the access policy: {error}") from None
    return policy_from_mapping(data, str(path))


class AccessLog:
    """Appends to, and reads, the access stream of an event store."""

    def __init__(self, store: EventStore, clock: Clock) -> None:
        self.store = store
        self._clock = clock

    def record(self, kind: str, actor: str, address: str | None, **fields: Any) -> Record:
        """Log one access fact, durably, before returning it."""
        new = NewRecord(self._clock.now(), actor, kind, {"address": address or "", **fields})
        for _ in range(APPEND_TRIES):
            seq = self.store.last_seq(ACCESS_STREAM)
            try:
                return self.store.append(ACCESS_STREAM, [new], seq)[0]
            except ConcurrentAppend:
                continue  # another process logged first: append after its record
        raise ConcurrentAppend(ACCESS_STREAM, seq, self.store.last_seq(ACCESS_STREAM))

    def read(self, after: int = 0, limit: int | None = None) -> list[Record]:
        records: list[Record] = []
        for record in self.store.read(ACCESS_STREAM, after):
            records.append(record)
            if limit is not None and len(records) >= limit:
                break
        return records


def describe_access(record: Record) -> dict[str, Any]:
    """One access record as the API and the exports show it."""
    return {"seq": record.seq, "at": record.at.isoformat(), "actor": record.actor, "kind": record.kind,
            **dict(record.data), "hash": record.hash}  # fmt: skip
