"""People and machines that may act on the studio: accounts with hashed passwords, sign-in sessions and API keys.

Rules held here:
- Passwords and PINs are hashed with Argon2 (argon2-cffi); nothing stores or logs them in clear.
- A session token and an API key are random (256 bits), shown once, and stored only as their SHA-256.
- Every account has exactly one role; the role decides what it may do (`dealer_ui` enforces it).
- Failed sign-ins are counted per name tried and per client address, failed API keys per address; too many within the
  policy's window lock the name (or the address) for a while. A name is locked whether or not an account has it, and
  every answer is the same for both, so nothing here tells a guesser which names exist.
- A session ends at its role's length or after its role's idle time (`studio.access.AccessPolicy`); a role may allow
  one session per person, a new sign-in ending the older one.
- Everything that changes who may act (sign-ins, failures, locks, sign-outs, expiries, accounts, API keys) is written
  to the access log (`studio.access`) before the call returns.
- A database that does not answer is an outage (`DatabaseUnavailable`), never "no such session".
"""

from __future__ import annotations

import hashlib
import math
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy import delete, update
from sqlalchemy.engine import make_url
from sqlalchemy.exc import IntegrityError, SQLAlchemyError
from sqlmodel import Field, Session, SQLModel, select

from studio import access as a
from studio.access import AccessLog, AccessPolicy
from studio.database import BIG_INTEGER, WRITE_OPTION, database_errors, open_engine
from studio.domain.errors import StudioError
from studio.domain.roles import Actor, Role
from studio.ports import Clock, EventStore
from studio.schema import migrate

# Argon2id at OWASP's recommended minimum (19 MiB, 2 passes, 1 lane): about 30 ms a hash here, which keeps a sign-in
# under 100 ms at p99 (bench/signin_bench.py). Online guessing is held back by the lockout, not by this cost; the cost
# is what a stolen copy of the database would face. Hashes made with other parameters (argon2-cffi's heavier defaults,
# before issue 18) still verify, and are re-made with these at the account's next sign-in.
ARGON2_TIME_COST, ARGON2_MEMORY_KIB, ARGON2_LANES = 2, 19 * 1024, 1
SESSION_HOURS = 12  # sessions opened before the access policy (migration 0007) end this long after they started
TOUCH_EVERY = timedelta(seconds=60)  # a session's last activity is written at most this often (idle is that exact)
KEYS_REMEMBERED = timedelta(minutes=10)  # how long a confirmed API key is honoured while the database is down
KEY_RECHECK = timedelta(seconds=2)  # a key confirmed this recently is not read again: a game server's burst of bets
# costs one read a key, not one a request; a revocation here forgets it at once, one by another process within this
BY_ACCESS = "system:access"  # the actor of what nobody identified did (a failed sign-in, a refused API key)


class UserError(StudioError):
    """An account could not be created or used as asked."""


class Locked(UserError):
    """Too many failed attempts: nothing is checked until `until` (the same answer whether or not the name exists)."""

    def __init__(self, until: datetime, now: datetime) -> None:
        self.until = until
        self.seconds = max(1, math.ceil((until - now).total_seconds()))  # for Retry-After
        super().__init__(
            f"too many failed attempts: try again after {until.strftime('%H:%M:%S')} UTC "
            f"({until.isoformat(timespec='seconds')}), or ask an admin to unlock the account"
        )


class SessionEnded(UserError):
    """The session was real but has ended (its length, or idle too long): the person signs in again."""


@dataclass(frozen=True, slots=True)
class Principal:
    name: str
    role: Role

    @property
    def actor(self) -> Actor:
        """This person or machine as the actor of a command (the log names it "pit_boss:bob")."""
        return Actor(self.role, self.name)


class UserAccount(SQLModel, table=True):
    __tablename__ = "user_account"
    name: str = Field(primary_key=True)
    role: str
    password_hash: str
    created_at: str
    disabled: bool = False
    display_name: str | None = None  # what players are shown (a dealer on the results feed); never the account name


class UserSession(SQLModel, table=True):
    __tablename__ = "user_session"
    token_hash: str = Field(primary_key=True)
    name: str = Field(index=True)
    role: str
    expires_at: str
    started_at: str | None = None  # None: opened before migration 0007 (ends at `expires_at`)
    last_seen: str | None = None  # the last request made with it, to within TOUCH_EVERY


class AccessFailure(SQLModel, table=True):
    """One failed attempt, counted against its subject: "account:NAME", "address:IP" (sign-ins) or "key:IP"."""

    __tablename__ = "access_failure"
    id: int | None = Field(default=None, primary_key=True, sa_type=BIG_INTEGER)
    subject: str = Field(index=True)
    at: str


class AccessLock(SQLModel, table=True):
    """A subject refused until `until` (a lockout)."""

    __tablename__ = "access_lock"
    subject: str = Field(primary_key=True)
    until: str
    at: str


class ApiKey(SQLModel, table=True):
    __tablename__ = "api_key"
    key_hash: str = Field(primary_key=True)
    name: str = Field(index=True)
    created_at: str


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def _check_name(name: str) -> str:
    cleaned = name.strip()
    if not cleaned or len(cleaned) > 64 or not all(ch.isalnum() or ch in "._-" for ch in cleaned):
        raise UserError(f"invalid account name {name!r}: 1 to 64 letters, digits, '.', '_' or '-'")
    return cleaned


def _check_display_name(display_name: str) -> str:
    cleaned = " ".join(display_name.split())
    if not cleaned or len(cleaned) > 40 or not all(ch.isprintable() for ch in cleaned):
        raise UserError(f"invalid display name {display_name!r}: 1 to 40 printable characters")
    return cleaned


@database_errors
class UserStore:
    def __init__(self, url: str, clock: Clock, policy: AccessPolicy | None = None,
                 log_store: EventStore | None = None) -> None:  # fmt: skip
        self._url = url
        self._engine = open_engine(make_url(url))
        self._clock = clock
        self._hasher = PasswordHasher(time_cost=ARGON2_TIME_COST, memory_cost=ARGON2_MEMORY_KIB,
                                      parallelism=ARGON2_LANES)  # fmt: skip
        # Writers take SQLite's write lock at BEGIN (BEGIN IMMEDIATE): a transaction that reads and then writes would
        # otherwise fail at once ("database is locked") when a table's writer committed in between.
        self._writer = self._engine.execution_options(**{WRITE_OPTION: True})
        self.policy = policy or AccessPolicy()
        migrate(self._engine)
        self._log_store = log_store  # the studio's event store; else one is opened on `url` when first needed
        self._own_log_store: EventStore | None = None
        self._locked: dict[str, datetime] = {}  # this process's view of the API-key locks, to refuse before looking
        self._confirmed_keys: dict[str, tuple[str, datetime]] = {}  # key hash -> (game server, last confirmed)

    def close(self) -> None:
        self._engine.dispose()
        if self._own_log_store is not None:
            self._own_log_store.close()
            self._own_log_store = None

    @property
    def access_log(self) -> AccessLog:
        if self._log_store is None:
            from studio.store_sql import SqlEventStore  # noqa: PLC0415 - a cycle at import time otherwise

            self._own_log_store = self._log_store = SqlEventStore(self._url)
        return AccessLog(self._log_store, self._clock)

    def add_user(self, name: str, role: Role, password: str, display_name: str | None = None, *,
                 min_length: int = 4, by: str = "system:cli", address: str | None = None) -> Principal:  # fmt: skip
        name = _check_name(name)
        shown = None if display_name is None else _check_display_name(display_name)
        if role is Role.GAME_SERVER:
            raise UserError("game servers sign in with API keys: use `studio users add-key NAME`")
        if len(password) < max(min_length, 4):
            raise UserError(f"a password needs at least {max(min_length, 4)} characters; nothing was created")
        account = UserAccount(name=name, role=role.value, password_hash=self._hasher.hash(password),
                              created_at=self._clock.now().isoformat(), display_name=shown)  # fmt: skip
        try:
            with Session(self._writer) as session:
                session.add(account)
                session.commit()
        except IntegrityError:
            raise UserError(f"an account named {name!r} already exists") from None
        self.access_log.record(a.ACCOUNT_CREATED, by, address, name=name, role=role.value, display_name=shown)
        return Principal(name, role)

    def set_display_name(self, name: str, display_name: str, *, by: str = "system:cli",
                         address: str | None = None) -> str:  # fmt: skip
        """Set what players are shown for this person (the dealer on the feed); returns it as stored."""
        shown = _check_display_name(display_name)
        with Session(self._writer) as session:
            account = session.get(UserAccount, name.strip())
            if account is None:
                raise UserError(f"no account named {name!r}")
            account.display_name = shown
            session.add(account)
            session.commit()
        self.access_log.record(a.ACCOUNT_CHANGED, by, address, name=name.strip(), display_name=shown)
        return shown

    def display_name(self, name: str) -> str | None:
        """What players are shown for this person; None when none was set."""
        with Session(self._engine) as session:
            account = session.get(UserAccount, name)
            return None if account is None else account.display_name

    def users(self) -> list[Principal]:
        with Session(self._engine) as session:
            return [
                Principal(u.name, Role(u.role)) for u in session.exec(select(UserAccount).order_by(UserAccount.name))
            ]

    def authenticate(self, name: str, password: str) -> Principal | None:
        """The account if the password is its own; no bookkeeping (`sign_in` is what people go through)."""
        with Session(self._engine) as session:
            account = session.get(UserAccount, name.strip())
        if account is None or account.disabled:
            self._hasher.hash(password)  # the same work whether or not the name exists
            return None
        try:
            self._hasher.verify(account.password_hash, password)
        except (VerificationError, InvalidHashError):
            return None
        if self._hasher.check_needs_rehash(account.password_hash):
            account.password_hash = self._hasher.hash(password)
            with Session(self._writer) as session:
                session.add(account)
                session.commit()
        return Principal(account.name, Role(account.role))

    # Signing in, with the lockout.

    def sign_in(self, name: str, password: str, address: str | None) -> tuple[Principal, str] | None:
        """A session for the account when the password is its own; None when not. Raises `Locked` while the name
        or the address is locked, without checking the password. Every outcome is logged."""
        tried = name.strip()
        subjects = [f"account:{tried}", f"address:{address or ''}"]
        until = self._lock_of(subjects)
        if until is not None:
            self.access_log.record(a.SIGN_IN_REFUSED, BY_ACCESS, address, name=tried, until=until.isoformat())
            raise Locked(until, self._clock.now())
        principal = self.authenticate(tried, password)
        if principal is None:
            self._fail(subjects, tried, address)
            return None
        token = self.open_session(principal, address, forgive=subjects[0])
        return principal, token

    def _lock_of(self, subjects: list[str]) -> datetime | None:
        """The latest time until which one of `subjects` is locked, if any is locked now."""
        now = self._clock.now()
        with Session(self._engine) as session:
            rows = session.exec(select(AccessLock).where(AccessLock.subject.in_(subjects))).all()  # type: ignore[attr-defined]
        until = [datetime.fromisoformat(row.until) for row in rows]
        latest = max((moment for moment in until if moment > now), default=None)
        return latest

    def _fail(self, subjects: list[str], tried: str, address: str | None) -> None:
        """Count a failed attempt against each subject; lock those that reached their limit (raising `Locked`)."""
        policy = self.policy
        now = self._clock.now()
        since = (now - policy.window).isoformat()
        limits = {"account": policy.max_failures, "address": policy.address_failures, "key": policy.address_failures}
        locked: list[tuple[str, datetime]] = []
        with Session(self._writer) as session:
            for subject in subjects:
                session.add(AccessFailure(subject=subject, at=now.isoformat()))
            session.flush()
            for subject in subjects:
                count = len(session.exec(select(AccessFailure.id).where(AccessFailure.subject == subject,
                                                                       AccessFailure.at > since)).all())  # fmt: skip
                if count >= limits[subject.partition(":")[0]]:
                    until = now + policy.lockout
                    existing = session.get(AccessLock, subject)
                    if existing is None:
                        session.add(AccessLock(subject=subject, until=until.isoformat(), at=now.isoformat()))
                    else:
                        existing.until, existing.at = until.isoformat(), now.isoformat()
                        session.add(existing)
                    locked.append((subject, until))
            session.commit()
        kind = a.API_KEY_REFUSED if subjects[0].startswith("key:") else a.SIGN_IN_FAILED
        fields = {} if kind == a.API_KEY_REFUSED else {"name": tried}
        self.access_log.record(kind, BY_ACCESS, address, **fields)
        for subject, until in locked:
            what, _, who = subject.partition(":")
            self._locked[subject] = until
            if what == "account":
                self.access_log.record(a.ACCOUNT_LOCKED, BY_ACCESS, address, name=who, until=until.isoformat(),
                                       failures=policy.max_failures)  # fmt: skip
            else:
                self.access_log.record(a.ADDRESS_LOCKED, BY_ACCESS, address, locked_address=who,
                                       until=until.isoformat(), attempts=what)  # fmt: skip
        if locked:
            raise Locked(max(until for _, until in locked), now)

    def unlock(self, name: str | None = None, *, address: str | None = None, by: str = "system:cli",
               from_address: str | None = None) -> bool:  # fmt: skip
        """End the lockout of an account (by name) or of a client address, and forget its failures. True if it was
        on record. Logged either way, so that an unlock is on record even when nothing was locked."""
        if (name is None) == (address is None):
            raise UserError("unlock an account by name, or an address, one at a time")
        subjects = [f"account:{name.strip()}"] if name is not None else [f"address:{address}", f"key:{address}"]
        with Session(self._writer) as session:
            locks = session.exec(select(AccessLock).where(AccessLock.subject.in_(subjects))).all()  # type: ignore[attr-defined]
            was_locked = bool(locks)  # a lock on record (perhaps run out: the command line has its own clock)
            for lock in locks:
                session.delete(lock)
            for failure in session.exec(select(AccessFailure).where(AccessFailure.subject.in_(subjects))).all():  # type: ignore[attr-defined]
                session.delete(failure)
            session.commit()
        for subject in subjects:
            self._locked.pop(subject, None)
        target = {"name": name.strip()} if name is not None else {"locked_address": address}
        self.access_log.record(a.ACCOUNT_UNLOCKED, by, from_address, **target, was_locked=was_locked)
        return was_locked

    # Sessions.

    def open_session(self, principal: Principal, address: str | None = None, *, forgive: str | None = None) -> str:
        """A new session for `principal` (its token, shown once), logged as a sign-in. With the role's single-session
        rule, the person's other sessions end. `forgive`: a failure subject whose count a good sign-in clears."""
        token = secrets.token_urlsafe(32)
        now = self._clock.now()
        rule = self.policy.for_role(principal.role)
        replaced = 0
        with Session(self._writer) as session:
            if forgive is not None:
                for failure in session.exec(select(AccessFailure).where(AccessFailure.subject == forgive)).all():
                    session.delete(failure)
            if rule.single:
                for other in session.exec(select(UserSession).where(UserSession.name == principal.name)).all():
                    session.delete(other)
                    replaced += 1
            session.add(UserSession(token_hash=_digest(token), name=principal.name, role=principal.role.value,
                                    expires_at=(now + rule.length).isoformat(), started_at=now.isoformat(),
                                    last_seen=now.isoformat()))  # fmt: skip
            session.commit()
        actor = str(principal.actor)
        if replaced:
            self.access_log.record(a.SESSION_REPLACED, actor, address, name=principal.name, sessions=replaced)
        self.access_log.record(a.SIGNED_IN, actor, address, name=principal.name, role=principal.role.value)
        return token

    def close_session(self, token: str, address: str | None = None) -> None:
        with Session(self._writer, expire_on_commit=False) as session:
            found = session.get(UserSession, _digest(token))
            if found is not None:
                session.delete(found)
                session.commit()
        if found is not None:
            actor = str(Actor(Role(found.role), found.name))
            self.access_log.record(a.SIGNED_OUT, actor, address, name=found.name)

    def principal_for_session(self, token: str, address: str | None = None, touch: bool = True) -> Principal | None:
        """Who holds this session; None for no session. Raises `SessionEnded` for one that has just ended (its
        length or idle time: the session is removed and the expiry logged), `DatabaseUnavailable` in an outage.
        `touch=False` asks without counting as use (a page's open stream re-checking its session is no activity)."""
        now = self._clock.now()
        digest = _digest(token)
        with Session(self._engine) as session:
            found = session.get(UserSession, digest)
        if found is None:
            return None
        role = Role(found.role)
        reason = self._ended(found, role, now)
        if reason is not None:
            with Session(self._writer) as session:
                session.execute(delete(UserSession).where(UserSession.token_hash == digest))  # type: ignore[arg-type]
                session.commit()
        elif (
            touch
            and found.last_seen is not None
            and now - datetime.fromisoformat(found.last_seen) >= min(TOUCH_EVERY, self.policy.for_role(role).idle / 4)
        ):  # written at most once a minute: a request is a read, not a write, almost always
            with Session(self._writer) as session:
                session.execute(update(UserSession).where(UserSession.token_hash == digest)  # type: ignore[arg-type]
                                .values(last_seen=now.isoformat()))  # fmt: skip
                session.commit()
        if reason is not None:
            actor = str(Actor(role, found.name))
            self.access_log.record(a.SESSION_EXPIRED, actor, address, name=found.name, reason=reason)
            raise SessionEnded(f"your session has ended ({reason}): sign in again")
        return Principal(found.name, role)

    def _ended(self, found: UserSession, role: Role, now: datetime) -> str | None:
        rule = self.policy.for_role(role)
        if found.started_at is None:
            return "it was opened 12 hours ago" if datetime.fromisoformat(found.expires_at) <= now else None
        if now >= datetime.fromisoformat(found.started_at) + rule.length:
            return f"a {role.value} session lasts {_span(rule.length)}"
        if found.last_seen is not None and now >= datetime.fromisoformat(found.last_seen) + rule.idle:
            return f"idle for {_span(rule.idle)}"
        return None

    # API keys.

    def add_api_key(self, name: str, *, by: str = "system:cli", address: str | None = None) -> str:
        """A new API key for a game server; the key is returned once and stored only as its hash."""
        name = _check_name(name)
        key = "sk_" + secrets.token_urlsafe(32)
        with Session(self._writer) as session:
            session.add(ApiKey(key_hash=_digest(key), name=name, created_at=self._clock.now().isoformat()))
            session.commit()
        self.access_log.record(a.API_KEY_CREATED, by, address, name=name)
        return key

    def revoke_api_keys(self, name: str, *, by: str = "system:cli", address: str | None = None) -> int:
        """Remove every API key of this game server; how many there were."""
        with Session(self._writer) as session:
            rows = session.exec(select(ApiKey).where(ApiKey.name == name.strip())).all()
            for row in rows:
                session.delete(row)
            session.commit()
        for digest in [d for d, (owner, _) in self._confirmed_keys.items() if owner == name.strip()]:
            del self._confirmed_keys[digest]
        if rows:
            self.access_log.record(a.API_KEY_REVOKED, by, address, name=name.strip(), keys=len(rows))
        return len(rows)

    def api_keys(self) -> list[tuple[str, str]]:
        """Each game server's keys: (name, when it was made), oldest first. The keys themselves are not kept."""
        with Session(self._engine) as session:
            rows = session.exec(select(ApiKey).order_by(ApiKey.created_at, ApiKey.name))
            return [(row.name, row.created_at) for row in rows]

    def confirmed_api_key(self, key: str, address: str | None = None) -> Principal | None:
        """The game server of a key the database confirmed within `KEY_RECHECK`, from memory (no I/O, so safe on the
        event loop); None when the database must be asked (`principal_for_api_key`), or the address is locked."""
        now = self._clock.now()
        until = None if address is None else self._locked.get(f"key:{address}")
        if until is not None and until > now:
            return None  # `principal_for_api_key` says it, with the time left
        confirmed = self._confirmed_keys.get(_digest(key))
        if confirmed is None or now - confirmed[1] > KEY_RECHECK:
            return None
        return Principal(confirmed[0], Role.GAME_SERVER)

    def principal_for_api_key(self, key: str, address: str | None = None) -> Principal | None:
        """The game server with this key; None for a wrong key (counted against `address`, when given). Raises
        `Locked` while the address is locked for wrong keys."""
        subject = f"key:{address}"
        if address is not None:
            until = self._locked.get(subject)
            if until is not None and until > self._clock.now():
                raise Locked(until, self._clock.now())
        digest = _digest(key)
        recent = self.confirmed_api_key(key)
        if recent is not None:
            return recent
        try:
            with Session(self._engine) as session:
                found = session.get(ApiKey, digest)
        except SQLAlchemyError:
            # The database does not answer: a key this process saw confirmed by it lately is still good (a feed
            # server goes on serving game servers from Redis); any other waits for the database (503).
            confirmed = self._confirmed_keys.get(digest)
            if confirmed is not None and self._clock.now() - confirmed[1] <= KEYS_REMEMBERED:
                return Principal(confirmed[0], Role.GAME_SERVER)
            raise
        if found is None:
            self._confirmed_keys.pop(digest, None)
        else:
            self._confirmed_keys[digest] = (found.name, self._clock.now())
            return Principal(found.name, Role.GAME_SERVER)
        if address is not None:
            until = self._lock_of([subject])  # locked by another process meanwhile?
            if until is not None:
                self._locked[subject] = until
                raise Locked(until, self._clock.now())
            self._fail([subject], "", address)
        return None


def _span(span: timedelta) -> str:
    minutes = int(span.total_seconds() // 60)
    return f"{minutes // 60} h" if minutes % 60 == 0 else f"{minutes} min"
