"""The sandbox driven by Twilio's and Vonage's official Python SDKs (twilio 9, vonage 4):
what the SDK sends is accepted, and the SDK reads what the sandbox answers.

Each SDK is synchronous (requests), so it runs in a thread beside the sandbox's loop.
Base URLs: twilio-python's ``Domain.base_url`` (twilio/base/domain.py), Vonage's
``HttpClientOptions.api_host`` (vonage_http_client/http_client.py), which the SDK
always prefixes with ``https://``: ``PlainHttp`` sends it to the loopback sandbox
over plain HTTP instead, and refuses any other host.
"""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

import pytest
import requests
from requests.adapters import HTTPAdapter
from twilio.base.exceptions import TwilioRestException
from twilio.rest import Client as TwilioClient
from vonage import Auth, HttpClientOptions, Vonage
from vonage_http_client.errors import AuthenticationError
from vonage_messages import Sms

from homing.sandbox import SandboxServer

SID = "AC" + "5" * 32
TO = "+14155552671"


def _twilio(sandbox: SandboxServer, token: str = "sandbox-token") -> TwilioClient:
    client = TwilioClient(SID, token)
    client.api.base_url = sandbox.provider_base_url("twilio")
    return client


async def test_twilio_sdk_sends_a_message_and_reads_the_resource(
    guarded_sandbox: SandboxServer,
) -> None:
    client = _twilio(guarded_sandbox)
    message = await asyncio.to_thread(
        client.messages.create, to=TO, from_="+15005550006", body="Hello from the SDK"
    )
    assert message.sid.startswith("SM") and message.status == "queued"
    assert (message.to, message.body, message.account_sid) == (TO, "Hello from the SDK", SID)
    assert isinstance(message.date_created, datetime)
    [recorded] = guarded_sandbox.state.recorder.messages("twilio")
    assert (recorded.message_id, recorded.to, recorded.text) == (
        message.sid,
        (TO,),
        "Hello from the SDK",
    )


async def test_twilio_sdk_reads_the_account_and_the_refusals(
    guarded_sandbox: SandboxServer,
) -> None:
    account = await asyncio.to_thread(_twilio(guarded_sandbox).api.v2010.accounts(SID).fetch)
    assert (account.sid, account.status) == (SID, "active")
    refused = _twilio(guarded_sandbox, "an-invalid-token").api.v2010.accounts(SID).fetch
    with pytest.raises(TwilioRestException) as info:
        await asyncio.to_thread(refused)
    assert (info.value.status, info.value.code) == (401, 20003)
    magic = _twilio(guarded_sandbox).messages.create
    with pytest.raises(TwilioRestException) as info:
        await asyncio.to_thread(magic, to="+15005550004", from_="+15005550006", body="hi")
    assert (info.value.status, info.value.code) == (400, 21610)


class PlainHttp(HTTPAdapter):
    """Sends the SDK's ``https://127.0.0.1:…`` requests to the sandbox over HTTP."""

    def send(self, request: requests.PreparedRequest, *args: Any, **kwargs: Any) -> Any:
        url = str(request.url)
        if urlsplit(url).hostname != "127.0.0.1":
            raise AssertionError(f"the SDK tried to leave the machine: {url}")
        request.url = "http://" + url.removeprefix("https://")
        return super().send(request, *args, **kwargs)


def _vonage(sandbox: SandboxServer, secret: str = "sandbox-secret") -> Vonage:
    host = sandbox.provider_base_url("vonage").removeprefix("http://")
    client = Vonage(Auth(api_key="abcd1234", api_secret=secret), HttpClientOptions(api_host=host))
    client.http_client._session.mount("https://", PlainHttp())
    return client


async def test_vonage_sdk_sends_an_sms_through_the_messages_api(
    guarded_sandbox: SandboxServer,
) -> None:
    sms = Sms(to="14155552671", from_="Acme", text="Hello from the SDK", client_ref="job-1")
    response = await asyncio.to_thread(_vonage(guarded_sandbox).messages.send, sms)
    [recorded] = guarded_sandbox.state.recorder.messages("vonage")
    assert recorded.message_id == response.message_uuid
    assert (recorded.to, recorded.sender, recorded.job_id) == ((TO,), "Acme", "job-1")


async def test_vonage_sdk_lists_applications_and_reads_a_refusal(
    guarded_sandbox: SandboxServer,
) -> None:
    # The application list is the credential check Homing's adapter makes.
    applications, next_page = await asyncio.to_thread(
        _vonage(guarded_sandbox).application.list_applications
    )
    assert (applications, next_page) == ([], None)
    refused = _vonage(guarded_sandbox, "an-invalid-secret").application.list_applications
    with pytest.raises(AuthenticationError):
        await asyncio.to_thread(refused)
