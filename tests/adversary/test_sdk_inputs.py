"""What a hostile peer can hand the Python SDK is bounded before it is parsed: the
webhook helper's signature headers and timestamps, and the Retry-After a server sends;
and a redirect from the base URL takes a send's body nowhere."""

from __future__ import annotations

import contextlib
import http.server
import threading
import time
from collections.abc import Iterator
from typing import Any, ClassVar

import httpx
import pytest
from homing_client import ApiError, Client, WebhookVerificationError, verify_webhook
from homing_client._core import retry_delay

SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
NOW = 1_700_000_000


def _refused_quickly(headers: dict[str, str], match: str) -> None:
    started = time.perf_counter()
    with pytest.raises(WebhookVerificationError, match=match):
        verify_webhook(SECRET, headers, b"{}", now=NOW)
    assert time.perf_counter() - started < 0.5


def test_a_megabyte_signature_header_is_refused_before_it_is_split() -> None:
    headers = {"webhook-id": "m", "webhook-timestamp": str(NOW)}
    _refused_quickly({**headers, "webhook-signature": "v1,a " * 200_000}, "too long")
    _refused_quickly({"x-webhook-signature": "t=1," + "v1=a," * 200_000}, "too long")


def test_many_signatures_within_the_length_bound_are_refused() -> None:
    headers = {"webhook-id": "m", "webhook-timestamp": str(NOW)}
    _refused_quickly({**headers, "webhook-signature": "v1,a " * 100}, "too many")


def test_a_timestamp_of_a_thousand_digits_is_refused_without_int_parsing() -> None:
    headers = {"webhook-id": "m", "webhook-timestamp": "9" * 100_000, "webhook-signature": "v1,a"}
    _refused_quickly(headers, "malformed timestamp")


def test_a_huge_or_hostile_retry_after_is_never_waited_on() -> None:
    for value in ("9" * 100_000, "1e9", "-5", "999999"):
        wait = retry_delay(httpx.Response(429, headers={"Retry-After": value}), 0, 0.1)
        assert wait is None or wait < 61


class _Recorder(http.server.BaseHTTPRequestHandler):
    """A loopback server: the redirecting one answers every request with ``status`` to
    the recording one, which counts what reaches it."""

    status = 307
    location = ""
    hits: ClassVar[list[str]] = []

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        if self.location:
            self.send_response(self.status)
            self.send_header("Location", self.location)
            self.send_header("Content-Length", "0")
        else:
            type(self).hits.append(self.path)
            self.send_response(202)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", "2")
        self.end_headers()
        if not self.location:
            self.wfile.write(b"{}")

    do_GET = do_POST = _answer

    def log_message(self, format: str, *args: Any) -> None:
        pass


def _recorder(status: int, location: str) -> type[_Recorder]:
    class Recorder(_Recorder):
        pass

    Recorder.status, Recorder.location, Recorder.hits = status, location, []
    return Recorder


@contextlib.contextmanager
def _serving(handler: type[http.server.BaseHTTPRequestHandler]) -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_a_redirect_from_the_base_url_is_an_error_and_the_body_goes_nowhere_else(
    status: int,
) -> None:
    sink = _recorder(status, "")
    with _serving(sink) as elsewhere:
        with _serving(_recorder(status, elsewhere)) as base_url:
            # A client handed in with redirects on is held to the same rule.
            http_client = httpx.Client(follow_redirects=True)
            with Client(base_url, "hk_test", http_client=http_client) as client:
                with pytest.raises(ApiError, match=f"HTTP {status}: a redirect") as raised:
                    client.email.send(
                        to="ada@example.com", from_="a@acme.example", subject="s", text="t"
                    )
    assert raised.value.status == status
    assert sink.hits == [], "the send's body reached the redirect's target"
