"""Bodies of the inbound-secret routes: what verifies a vendor's events."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from pydantic import BaseModel, StringConstraints

from homing.api.schemas.shared import Strict
from homing.inbound.secrets import InboundSecretInfo

Secret = Annotated[str, StringConstraints(min_length=1, max_length=4096)]
Credential = Annotated[str, StringConstraints(min_length=1, max_length=256)]


class BasicAuth(Strict):
    username: Credential
    password: Credential


class InboundSecretPut(Strict):
    """Exactly one of the fields, the one the account's provider uses."""

    verification_key: Secret | None = None
    signing_secret: Secret | None = None
    basic_auth: BasicAuth | None = None
    # Telegram's setWebhook secret_token: the pattern is checked by homing.inbound.secrets.
    secret_token: Credential | None = None

    def given(self) -> dict[str, Any]:
        return self.model_dump(exclude_none=True)


class InboundSecretPublic(BaseModel):
    provider_account_id: str
    provider: str
    kind: str
    preview: str
    path: str
    updated_at: datetime

    @classmethod
    def of(cls, info: InboundSecretInfo) -> InboundSecretPublic:
        return cls(
            provider_account_id=info.provider_account_id,
            provider=info.provider,
            kind=info.kind,
            preview=info.preview,
            path=info.path,
            updated_at=info.updated_at,
        )
