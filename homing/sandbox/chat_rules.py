"""The chat vendors' rate rules, enforced as the vendors do: a request over a rule is
answered 429 with the seconds until the rule has room, and counted per rule.

Telegram (core.telegram.org/bots/faq, "Broadcasting to users"): 30 messages a second
per bot, one a second per individual chat, 20 a minute per group or channel (negative
chat ids, @channels). Slack: one message a second per incoming webhook. Windows are
moving windows over the requests the sandbox accepted, so a benchmark can prove that
no rule was ever exceeded: ``/_sandbox/stats`` shows every 429 a rule answered.
"""

from __future__ import annotations

import math
import time
from collections import Counter, OrderedDict, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

# (rule name, limit, seconds)
TELEGRAM_BOT: Final = ("bot", 30, 1.0)
TELEGRAM_CHAT: Final = ("chat", 1, 1.0)
TELEGRAM_GROUP: Final = ("group", 20, 60.0)
SLACK_WEBHOOK: Final = ("webhook", 1, 1.0)
MAX_WINDOWS: Final = 100_000


@dataclass(frozen=True, slots=True)
class Refusal:
    """A rule that had no room: its name and whole seconds until it has."""

    rule: str
    retry_after: int


class RuleBook:
    """Moving windows per (vendor, rule, key), bounded in keys; 429s counted per rule."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._windows: OrderedDict[tuple[str, str, str], deque[float]] = OrderedDict()
        self.refused: Counter[str] = Counter()
        self.enforced = True

    def take(
        self, vendor: str, rules: Sequence[tuple[tuple[str, int, float], str]]
    ) -> Refusal | None:
        """Count one request against every ``(rule, key)`` when all have room; else
        count nothing and name the first rule without room."""
        now = self._clock()
        windows = []
        for (name, limit, seconds), key in rules:
            hits = self._window((vendor, name, key))
            while hits and hits[0] <= now - seconds:
                hits.popleft()
            if self.enforced and len(hits) >= limit:
                self.refused[f"{vendor}.{name}"] += 1
                wait = hits[0] + seconds - now
                return Refusal(name, max(1, math.ceil(wait)))
            windows.append(hits)
        for hits in windows:
            hits.append(now)
        return None

    def _window(self, key: tuple[str, str, str]) -> deque[float]:
        hits = self._windows.get(key)
        if hits is None:
            hits = self._windows[key] = deque()
            while len(self._windows) > MAX_WINDOWS:
                self._windows.popitem(last=False)
        else:
            self._windows.move_to_end(key)
        return hits

    def stats(self) -> dict[str, Any]:
        """429s answered per rule (``telegram.bot``, ``telegram.chat``, …)."""
        names = [f"telegram.{r[0]}" for r in (TELEGRAM_BOT, TELEGRAM_CHAT, TELEGRAM_GROUP)]
        names.append(f"slack.{SLACK_WEBHOOK[0]}")
        return {"enforced": self.enforced, "refused": {n: self.refused[n] for n in names}}

    def clear(self) -> None:
        self._windows.clear()
        self.refused.clear()
