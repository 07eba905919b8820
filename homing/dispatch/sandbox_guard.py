"""Test API keys reach a sandbox only, never a real provider.

A job accepted with a test key (``hk_test_…``) carries ``test=True``. Right before
the provider call, the sender asks ``SandboxGuard.check`` about the destination it is
about to use. The call goes ahead only when that destination is one of
``HOMING_SANDBOX_URLS``: same scheme, host and port, and a path at or under the listed
one (``smtp://host:port`` for a mail server). Anything else is refused as
``provider_permanent``: the refusal is recorded as an attempt and that provider is
skipped for the rest of the job, so a test job falls through to the tenant's sandbox
providers, or fails, but never reaches a real provider. A provider with no
``base_url`` speaks to the vendor's real API and is always refused.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

from homing.models import FailureClass, Job, ProviderAccount
from homing.providers.base import ProviderFailure

_DEFAULT_PORTS = {"http": 80, "https": 443, "smtp": 25}


@dataclass(frozen=True, slots=True)
class _Place:
    scheme: str
    host: str
    port: int | None
    path: str

    def serves(self, scheme: str | None, host: str, port: int | None) -> bool:
        """Same server: host and port, and the scheme unless ``scheme`` is None."""
        same_scheme = scheme is None or scheme == self.scheme
        return same_scheme and (self.host, self.port) == (host, port)

    def covers(self, other: _Place) -> bool:
        return self.serves(other.scheme, other.host, other.port) and (
            other.path == self.path or other.path.startswith(self.path.rstrip("/") + "/")
        )


def _place(url: str) -> _Place | None:
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if not scheme or not parts.hostname:
        return None
    return _Place(
        scheme=scheme,
        host=parts.hostname.lower(),
        port=port if port is not None else _DEFAULT_PORTS.get(scheme),
        path=parts.path.rstrip("/") or "/",
    )


class SandboxGuard:
    """Knows the sandbox URLs; refuses a test job anything else."""

    def __init__(self, urls: Iterable[str] = ()) -> None:
        self._places: list[_Place] = []
        for url in urls:
            self.allow(url)

    def __repr__(self) -> str:
        return f"SandboxGuard({len(self._places)} sandbox URLs)"

    def allow(self, url: str) -> None:
        """Add a sandbox URL (``homing run --demo`` adds the sandbox it starts)."""
        place = _place(url)
        if place is None:
            raise ValueError("a sandbox URL needs a scheme and a host, e.g. http://127.0.0.1:8025")
        self._places.append(place)

    def allows(self, destination: str | None) -> bool:
        place = _place(destination) if destination else None
        return place is not None and any(p.covers(place) for p in self._places)

    def serves(self, scheme: str | None, host: str, port: int | None) -> bool:
        """Whether a sandbox URL names this server (scheme, host and port), whatever the
        path. ``scheme`` None matches any scheme: a connection's address check knows only
        the host and port (the provider endpoint guard, ``homing.providers.endpoints``)."""
        host = host.lower()
        port = port if port is not None or scheme is None else _DEFAULT_PORTS.get(scheme)
        return any(p.serves(scheme, host, port) for p in self._places)

    def check(self, job: Job, provider: str, destination: str | None) -> None:
        """Raise ProviderFailure when ``job`` is a test job and ``destination`` no sandbox."""
        if not job.test or self.allows(destination):
            return
        where = destination or f"{provider}'s own API"
        raise ProviderFailure(
            FailureClass.PROVIDER_PERMANENT,
            f"{provider}: not sent, a test API key's job goes only to a sandbox "
            f"(HOMING_SANDBOX_URLS), and {where} is not one",
        )


def destination(sender: object, account: ProviderAccount, job: Job) -> str | None:
    """Where ``sender`` would deliver ``job`` through ``account``, if it can say.

    A sender that cannot say (no ``destination`` method) gets None, which no sandbox
    URL matches: a test job is refused rather than risked.
    """
    ask = getattr(sender, "destination", None)
    if ask is None:
        return None
    where: str | None = ask(account, job)
    return where
