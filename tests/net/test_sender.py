"""The sender's core over a mock transport: retries, waits, typed errors, cancelling, secrets.

Each protocol's request path (REST GET, JSON POST, and the interface's
envelope POST) goes through the one core, :meth:`Sender.send`; these tests
drive it with :class:`MockTransport`, a service as a function. The same
behaviour over real sockets is tested by the client's, Iris's and sync's
tests against servers on loopback.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import requests

from cctx_research import errors
from cctx_research.client.envelope import request as envelope_request
from cctx_research.config import Secret
from cctx_research.net import (
    DEFAULT_CACHING,
    Cancelled,
    MockTransport,
    Request,
    RequestStats,
    Response,
    Sender,
    SenderOptions,
    json_post,
    rest_get,
)

BASE = "http://api.invalid"
KEY = "sk-NETCANARY-0123456789"


def reply(status: int, document: Any, **headers: str) -> Response:
    return Response(status, {"Content-Type": "application/json", **headers},
                    json.dumps(document).encode())  # fmt: skip


class Script:
    """A service that answers from a list, one reply (or exception) per request; records them."""

    def __init__(self, *answers: Response | Exception) -> None:
        self.answers = list(answers)
        self.seen: list[Request] = []

    def __call__(self, request: Request) -> Response:
        self.seen.append(request)
        answer = self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
        if isinstance(answer, Exception):
            raise answer
        return answer


@pytest.fixture
def make_sender() -> Iterator[Callable[..., tuple[Sender, list[float]]]]:
    """Senders over a script, whose waits are recorded rather than slept."""
    made: list[Sender] = []

    def make(handler: Callable[[Request], Response], **options: Any) -> tuple[Sender, list[float]]:
        options.setdefault("backoff", 0.01)
        sender = Sender(BASE, SenderOptions(transport=MockTransport(handler), **options))
        waits: list[float] = []
        sender.sleep = waits.append
        made.append(sender)
        return sender, waits

    yield make
    for sender in made:
        sender.close()


def test_a_rest_get_sends_sorted_params_and_answers_the_whole_document(make_sender):
    script = Script(reply(200, {"messages": [1, 2]}))
    sender, _ = make_sender(script)
    stats = RequestStats()

    answer = sender.send(rest_get(BASE, "/v2/messages/6", {"z": 1, "a": "b"}), stats=stats)

    assert answer.body == {"messages": [1, 2]}
    assert answer.status == 200
    assert not answer.from_cache
    (seen,) = script.seen
    assert (seen.method, seen.url) == ("GET", f"{BASE}/v2/messages/6?a=b&z=1")
    assert seen.content == b""
    assert "Content-Type" not in seen.headers
    assert (stats.requests, stats.network, stats.retries) == (1, 1, 0)


def test_a_json_post_sends_compact_json_and_reads_a_plain_reply(make_sender):
    script = Script(reply(200, {"jsonrpc": "2.0", "id": 1, "result": "0x10"}))
    sender, _ = make_sender(script)

    body = {"jsonrpc": "2.0", "id": 1, "method": "eth_blockNumber", "params": []}
    answer = sender.send(json_post(BASE, body, operation="eth_blockNumber"))

    assert answer.body["result"] == "0x10"
    (seen,) = script.seen
    assert seen.method == "POST"
    assert seen.url == BASE + "/"
    assert seen.content == b'{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}'
    assert seen.headers["Content-Type"] == "application/json"


def test_the_envelope_path_answers_the_body_and_checks_both_statuses(make_sender):
    address = f"{BASE}/rest/p/"
    ok = Script(reply(200, {"status": 200, "body": {"mintCount": 3}}))
    sender, _ = make_sender(ok)
    answer = sender.send(envelope_request(address, "stats-volume", {"b": 1, "a": 2},
                                          caching=DEFAULT_CACHING, check=None))  # fmt: skip
    assert answer.body == {"mintCount": 3}
    assert ok.seen[0].url == f"{address}stats-volume"
    assert ok.seen[0].content == b'{"a":2,"b":1}'

    # HTTP 200 carrying an error envelope is the envelope's error, with its message
    refused = Script(reply(200, {"status": 404, "body": {"error": "not_found", "message": "no"}}))
    sender, _ = make_sender(refused)
    with pytest.raises(errors.NotFoundError, match="not_found: no") as info:
        sender.send(envelope_request(address, "tx", {}, caching=DEFAULT_CACHING, check=None))
    assert info.value.status == 404
    assert len(refused.seen) == 1  # not retried

    not_envelope = Script(reply(200, [1, 2]))
    sender, _ = make_sender(not_envelope)
    with pytest.raises(errors.ResponseSchemaError, match="envelope") as info:
        sender.send(envelope_request(address, "tx", {}, caching=DEFAULT_CACHING, check=None))
    assert info.value.operation == "tx"


def test_transient_failures_are_retried_with_capped_full_jitter(make_sender):
    script = Script(reply(503, {}), requests.ConnectionError("reset"), reply(502, {}),
                    reply(200, {"ok": True}))  # fmt: skip
    sender, waits = make_sender(script, backoff=0.5, max_backoff=0.75)
    stats = RequestStats()

    answer = sender.send(rest_get(BASE, "q"), stats=stats)

    assert answer.body == {"ok": True}
    assert len(script.seen) == 4
    assert len(waits) == 3
    # full jitter: uniform in [0, min(max_backoff, backoff * 2**n)]
    for n, wait in enumerate(waits):
        assert 0 <= wait <= min(0.75, 0.5 * 2**n)
    assert (stats.requests, stats.network, stats.retries, stats.throttled) == (1, 4, 3, 1)


def test_retry_after_is_waited_out_and_a_long_one_is_raised_at_once(make_sender):
    script = Script(reply(429, {}, **{"Retry-After": "2"}), reply(200, {}))
    sender, waits = make_sender(script)
    sender.send(rest_get(BASE, "q"))
    assert len(waits) == 1
    assert waits[0] >= 2.0

    blocked = Script(reply(429, {"message": "slow down"}, **{"Retry-After": "300"}))
    sender, waits = make_sender(blocked, max_backoff=60.0)
    with pytest.raises(errors.RateLimitError, match="slow down") as info:
        sender.send(rest_get(BASE, "q"))
    assert info.value.retry_after == 300
    assert waits == []
    assert len(blocked.seen) == 1


def test_persistent_failures_raise_the_typed_error_after_the_retries(make_sender):
    script = Script(requests.ConnectionError("down"))
    sender, waits = make_sender(script, retries=2, name="the node")
    failed = r"connection to the node failed \(ConnectionError\)"
    with pytest.raises(errors.ServerError, match=failed):
        sender.send(json_post(BASE, {}, operation="eth_call"))
    assert len(script.seen) == 3
    assert len(waits) == 2

    timing_out = Script(requests.Timeout("slow"))
    sender, _ = make_sender(timing_out, retries=0, timeout=7.0)
    with pytest.raises(errors.ServerError, match=r"timed out after 7\.0s"):
        sender.send(rest_get(BASE, "q"))


@pytest.mark.parametrize(("status", "error"), [(400, errors.BadRequestError),
                                               (401, errors.AuthError),
                                               (404, errors.NotFoundError)])  # fmt: skip
def test_what_retrying_cannot_help_is_raised_at_once(make_sender, status, error):
    script = Script(reply(status, {"error": "no"}))
    sender, waits = make_sender(script)
    with pytest.raises(error):
        sender.send(rest_get(BASE, "q"))
    assert len(script.seen) == 1
    assert waits == []


def test_unreadable_and_invalid_replies_are_retried_like_truncated_ones(make_sender):
    def check(body: Any) -> None:
        if "rows" not in body:
            raise errors.ResponseSchemaError("no rows")

    script = Script(Response(200, {}, b'{"rows": [1, '), reply(200, {"other": 1}),
                    reply(200, {"rows": []}))  # fmt: skip
    sender, waits = make_sender(script)
    answer = sender.send(rest_get(BASE, "q", validate=check))
    assert answer.body == {"rows": []}
    assert len(waits) == 2

    never = Script(reply(200, {"other": 1}))
    sender, _ = make_sender(never, retries=1)
    with pytest.raises(errors.ResponseSchemaError, match="no rows") as info:
        sender.send(rest_get(BASE, "q", validate=check, operation="listing"))
    assert (info.value.operation, info.value.status) == ("listing", 200)


def test_a_cancelled_call_sends_nothing_more_and_a_wait_ends_at_once(make_sender):
    cancel = threading.Event()
    cancel.set()
    script = Script(reply(200, {}))
    sender, _ = make_sender(script)
    with pytest.raises(Cancelled):
        sender.send(rest_get(BASE, "q"), cancel=cancel)
    assert script.seen == []

    # cancelled during the wait before a retry (30 s asked): the wait ends, no new attempt
    cancel = threading.Event()
    failing = Script(reply(503, {}, **{"Retry-After": "30"}))
    sender = Sender(BASE, SenderOptions(transport=MockTransport(failing)))
    threading.Timer(0.2, cancel.set).start()
    started = time.monotonic()
    with pytest.raises(Cancelled):
        sender.send(rest_get(BASE, "q"), cancel=cancel)
    assert time.monotonic() - started < 10
    assert len(failing.seen) == 1
    sender.close()


def test_the_secret_header_is_sent_and_scrubbed_from_every_message(make_sender):
    echo = Script(reply(401, {"message": f"bad key {KEY} for {BASE}/rest"}))
    sender, _ = make_sender(echo, secret_header=("x-api-key", Secret(KEY)), name="the service")
    with pytest.raises(errors.AuthError) as info:
        sender.send(rest_get(BASE, "q"))
    assert echo.seen[0].headers["x-api-key"] == KEY
    assert KEY not in str(info.value)
    assert "bad key *** for the service/rest" in str(info.value)
    assert KEY not in repr(sender.__dict__)

    keyless = Script(reply(200, {}))
    sender, _ = make_sender(keyless, secret_header=("x-api-key", Secret("")))
    sender.send(rest_get(BASE, "q"))
    assert "x-api-key" not in keyless.seen[0].headers


def test_pace_is_paid_by_each_request_over_the_wire(make_sender):
    paid: list[int] = []
    script = Script(reply(503, {}), reply(200, {}))
    sender, _ = make_sender(script, pace=lambda: paid.append(1))
    sender.send(rest_get(BASE, "q"))
    assert len(paid) == 2


def test_mock_transport_wants_a_callable():
    with pytest.raises(TypeError, match="callable"):
        MockTransport("not a function")  # type: ignore[arg-type]
