"""homing_client: the Python SDK for Homing's HTTP API.

from homing_client import Client
client = Client(base_url="http://127.0.0.1:8000", api_key="hk_...")
"""

from __future__ import annotations

from homing_client import errors, models
from homing_client.aio import AsyncClient
from homing_client.client import Client
from homing_client.errors import ApiError, HomingConnectionError, HomingError, HomingTimeout
from homing_client.webhooks import WebhookVerificationError, verify_webhook

__version__ = "0.1.0"

__all__ = [
    "ApiError",
    "AsyncClient",
    "Client",
    "HomingConnectionError",
    "HomingError",
    "HomingTimeout",
    "WebhookVerificationError",
    "errors",
    "models",
    "verify_webhook",
]
