"""``GET /metrics``: the Prometheus scrape of this process (of every process of one
``homing run``), operator-facing, behind ``HOMING_METRICS_TOKEN`` when it is set
(docs/architecture.md "Metrics")."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Header, Request, Response
from prometheus_client import CONTENT_TYPE_LATEST

from homing.api.scrape import Scrape, check_token

router = APIRouter(tags=["operations"])


@router.get("/metrics", include_in_schema=False)
async def metrics(
    request: Request, authorization: Annotated[str | None, Header()] = None
) -> Response:
    """The exposition text; 401 ``unauthenticated`` without the token when one is set."""
    scrape: Scrape = request.app.state.scrape
    check_token(request.app.state.metrics_token, authorization)
    return Response(await scrape.text(), media_type=CONTENT_TYPE_LATEST)
