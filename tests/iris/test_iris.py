"""The Iris client against the stand-in serving real Iris replies (loopback HTTP and WSGI)."""

from __future__ import annotations

import collections
import json
import threading

import pandas as pd
import pytest

from cctx_research import errors
from cctx_research.iris import MESSAGE_COLUMNS, IrisClient, IrisOptions
from cctx_research.provenance import provenance

from .conftest import AS_OF
from .standin import CCTP_REAL, IRIS, IrisStandin

REPLIES = json.loads((CCTP_REAL / "iris_v2_replies.json").read_text())["entries"]
COMPLETE = next(e for e in REPLIES if e["id"] == "iris_v2_complete_sepolia_to_fuji")
PENDING = next(e for e in REPLIES if e["id"] == "iris_v2_pending_op_sepolia")
MAINNET = json.loads((IRIS / "replies.json").read_text())["messages"][0]
UNKNOWN_TX = "0x" + "ee" * 32


def fields(hex_message: str) -> dict[str, object]:
    """A V2 burn message's fields, sliced by hand from its bytes (circlefin's MessageV2)."""
    raw = bytes.fromhex(hex_message[2:])
    header, body = raw[:148], raw[148:]

    def uint(b: bytes) -> int:
        return int.from_bytes(b, "big")

    def addr(word: bytes) -> str:
        return "0x" + (word[12:] if word[:12] == bytes(12) else word).hex()

    return {
        "source_domain": uint(header[4:8]),
        "destination_domain": uint(header[8:12]),
        "nonce": "0x" + header[12:44].hex(),
        "sender": addr(header[44:76]),
        "recipient": addr(header[76:108]),
        "destination_caller": addr(header[108:140]),
        "min_finality_threshold": uint(header[140:144]),
        "finality_threshold_executed": uint(header[144:148]),
        "burn_token": addr(body[4:36]),
        "mint_recipient": addr(body[36:68]),
        "amount_raw": uint(body[68:100]),
        "message_sender": addr(body[100:132]),
        "max_fee_raw": uint(body[132:164]),
        "fee_executed_raw": uint(body[164:196]),
        "expiration_block": uint(body[196:228]),
        "hook_data": "0x" + body[228:].hex(),
    }


def test_complete_reply_decodes_to_its_bytes_and_to_circles_decode(make_iris, standin):
    iris = make_iris()
    reply = COMPLETE["reply"]["messages"][0]
    frame = iris.messages(0, nonce=reply["eventNonce"])

    assert list(frame.columns) == list(MESSAGE_COLUMNS)
    assert len(frame) == 1
    row = frame.iloc[0]
    for name, value in fields(reply["message"]).items():
        assert row[name] == value, name
    # and Circle's own decodedMessage agrees
    decoded, body = reply["decodedMessage"], reply["decodedMessage"]["decodedMessageBody"]
    assert row["amount_raw"] == int(body["amount"]) == 1_000_000
    assert row["max_fee_raw"] == int(body["maxFee"])
    assert row["fee_executed_raw"] == 100
    assert row["expiration_block"] == int(body["expirationBlock"])
    assert row["min_finality_threshold"] == int(decoded["minFinalityThreshold"])
    assert row["destination_domain"] == int(decoded["destinationDomain"]) == 1
    assert row["nonce"] == decoded["nonce"] == row["event_nonce"]
    assert row["status"] == "complete"
    assert pd.isna(row["delay_reason"])
    assert row["attestation"] == reply["attestation"]
    assert row["cctp_version"] == 2
    assert row["source_chain"] == "ethereum"
    assert row["destination_chain"] == "avalanche"
    assert row["as_of"] == AS_OF
    assert frame["amount_raw"].dtype == "Int64"
    assert str(frame["source_chain"].dtype) == "category"
    record = provenance(frame)
    assert record.operation == "iris.messages"
    assert record.count == {"messages": 1, "not_found": 0}
    assert record.params == {"source_domain": 0, "nonce": reply["eventNonce"]}
    assert record.fetched_at == AS_OF
    # Iris needs no key, and none is sent
    assert all("x-api-key" not in seen.headers for seen in standin.seen)


def test_mainnet_reply_without_decoded_message_is_decoded_from_its_bytes(make_iris):
    frame = make_iris().messages("base", MAINNET["source_tx_hash"].upper().replace("0X", "0x"))

    row = frame.iloc[0]
    assert row["tx_hash"] == MAINNET["source_tx_hash"]
    assert (row["source_domain"], row["destination_domain"]) == (6, 1)
    assert row["amount_raw"] == 1_000_000
    assert row["max_fee_raw"] == 100
    assert (row["min_finality_threshold"], row["finality_threshold_executed"]) == (500, 1000)
    assert row["burn_token"] == "0x833589fcd6edb6e08f4c7c32d4f71b54bda02913"  # Base USDC
    assert row["mint_recipient"] == "0x5c2632cedb167609c7f12e9bbfbc5665cfd66d40"
    assert row["expiration_block"] == 0x388A9F0
    assert row["hook_data"] == "0x"


def test_pending_reply_has_no_attestation_and_says_so(make_iris):
    frame = make_iris().messages("op", PENDING["source_tx_hash"])

    row = frame.iloc[0]
    assert row["status"] == "pending_confirmations"
    assert pd.isna(row["attestation"])
    assert pd.isna(row["message"])
    assert pd.isna(row["delay_reason"])
    assert row["event_nonce"] == PENDING["reply"]["messages"][0]["eventNonce"]
    assert row["cctp_version"] == 2
    assert frame[["amount_raw", "destination_domain", "nonce"]].isna().all().all()


def test_pending_with_a_decoded_message_and_a_delay_reason_reads_both():
    # Circle's schema allows decodedMessage and delayReason on a pending message; no
    # real such reply was found, so this one is the real pending reply with the decoded
    # fields of the real complete one and one of the documented reasons.
    reply = json.loads(json.dumps(PENDING["reply"]))
    reply["messages"][0]["decodedMessage"] = COMPLETE["reply"]["messages"][0]["decodedMessage"]
    reply["messages"][0]["delayReason"] = "insufficient_fee"
    standin = IrisStandin([(2, PENDING["source_tx_hash"], reply)])
    with IrisClient("http://iris.invalid", cache=False, transport=_wsgi(standin)) as iris:
        row = iris.messages(2, PENDING["source_tx_hash"]).iloc[0]
    assert row["delay_reason"] == "insufficient_fee"
    assert row["amount_raw"] == 1_000_000
    assert row["destination_domain"] == 1
    assert pd.isna(row["attestation"])


def test_unknown_transaction_is_an_empty_frame_not_an_error(make_iris, standin):
    frame = make_iris().messages(6, UNKNOWN_TX)

    assert frame.empty
    assert list(frame.columns) == list(MESSAGE_COLUMNS)
    assert frame["amount_raw"].dtype == "Int64"
    assert provenance(frame).count == {"messages": 0, "not_found": 1}
    assert len(standin.seen) == 1  # a 404 is not retried


def test_429_then_success_waits_as_retry_after_says(make_iris, standin):
    iris = make_iris()
    waits: list[float] = []
    iris.sender.sleep = waits.append
    standin.fail_next(429, retry_after="2")

    frame = iris.messages("op", PENDING["source_tx_hash"])

    assert len(frame) == 1
    assert len(standin.seen) == 2
    assert len(waits) == 1
    assert waits[0] >= 2.0
    assert provenance(frame).retries == 1


def test_a_five_minute_block_is_raised_at_once_with_its_wait(make_iris, standin):
    iris = make_iris()
    iris.sender.sleep = lambda s: pytest.fail("must not wait out a 5-minute block")
    standin.fail_next(429, retry_after="300")

    with pytest.raises(errors.RateLimitError) as info:
        iris.messages("op", PENDING["source_tx_hash"])
    assert info.value.retry_after == 300
    assert len(standin.seen) == 1


def test_complete_messages_are_fetched_once_pending_ones_every_time(make_iris, standin, tmp_path):
    iris = make_iris()
    nonce = COMPLETE["reply"]["messages"][0]["eventNonce"]
    first = iris.messages(0, nonce=nonce)
    second = iris.messages(0, nonce=nonce)
    pd.testing.assert_frame_equal(first, second)
    assert len(standin.requests_to("/v2/messages/0")) == 1
    assert provenance(second).cache_hits == 1
    # kept on disk: a new client reads it without asking
    again = make_iris().messages(0, nonce=nonce)
    assert len(again) == 1
    assert provenance(again).network_requests == 0

    for _ in range(2):
        iris.messages(2, PENDING["source_tx_hash"])
    assert len(standin.requests_to("/v2/messages/2")) == 2


def test_not_found_is_not_cached(make_iris, standin):
    iris = make_iris()
    iris.messages(6, UNKNOWN_TX)
    iris.messages(6, UNKNOWN_TX)
    assert len(standin.seen) == 2


def test_rate_never_exceeded_across_threads(make_iris, standin):
    rate = 10
    iris = make_iris(rate=rate, cache=False)
    errors_seen: list[BaseException] = []

    def worker() -> None:
        try:
            for _ in range(8):
                iris.messages(2, PENDING["source_tx_hash"])
        except BaseException as exc:  # surfaced below
            errors_seen.append(exc)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors_seen == []
    arrivals = sorted(seen.at for seen in standin.seen)
    assert len(arrivals) == 32
    # Sent 1/rate apart: at most rate + 1 in any second. Arrivals can bunch when the
    # shared machine stalls the server (two more allowed); an unpaced client sends
    # these 32 requests in well under two seconds.
    per_second = collections.Counter(int(at) for at in arrivals)
    assert max(per_second.values()) <= rate + 3, per_second
    most = max(sum(1 for b in arrivals[i:] if b - a < 1.0) for i, a in enumerate(arrivals))
    assert most <= rate + 3, arrivals


def test_fees_are_a_snapshot_with_its_time_and_never_cached(make_iris, standin):
    iris = make_iris()
    frame = iris.fees("ethereum", 26)
    frame_again = iris.fees(0, "26")

    assert frame["finality_threshold"].tolist() == [1000, 2000]
    assert frame["minimum_fee_bps"].tolist() == [1.0, 0.0]
    assert frame["minimum_fee_bps"].dtype == "float64"
    assert (frame["as_of"] == AS_OF).all()
    assert str(frame["as_of"].dtype) == "datetime64[ns, UTC]"
    assert frame["source_chain"].tolist() == ["ethereum", "ethereum"]
    pd.testing.assert_frame_equal(frame, frame_again)
    assert len(standin.requests_to("/v2/burn/USDC/fees/0/26")) == 2


def test_fractional_fees_stay_fractional(make_iris):
    # the shape of the documented reply with a fractional fee (fees "0-14 basis points")
    standin = IrisStandin(fees={(0, 6): [{"finalityThreshold": 1000, "minimumFee": 1.3}]})
    frame = make_iris(standin).fees(0, 6)
    assert frame["minimum_fee_bps"].tolist() == [1.3]


def test_fast_allowance_in_exact_base_units(make_iris):
    frame = make_iris().fast_allowance()

    assert len(frame) == 1
    row = frame.iloc[0]
    assert row["allowance_raw"] == 99_999_999_225_241_740
    assert row["allowance"] == pytest.approx(99999999225.24174)
    assert row["last_updated"] == pd.Timestamp("2025-12-02T13:17:02.453Z")
    assert row["as_of"] == AS_OF
    assert provenance(frame).operation == "iris.fast_allowance"


@pytest.mark.parametrize(
    ("call", "error", "words"),
    [
        (lambda i: i.messages("nowhere", UNKNOWN_TX), ValueError, "nowhere"),
        (lambda i: i.messages(6, "0x1234"), ValueError, "64 hex"),
        (lambda i: i.messages(6), TypeError, "exactly one"),
        (lambda i: i.messages(6, UNKNOWN_TX, nonce="1"), TypeError, "exactly one"),
        (lambda i: i.messages(6, nonce="0xabc"), ValueError, "V2 nonce"),
        (lambda i: i.messages(-1, UNKNOWN_TX), ValueError, "non-negative"),
        (lambda i: i.messages(6, 12), TypeError, "str"),
        (lambda i: i.fees("base", 6), ValueError, "route joins two domains"),
        (lambda i: i.fees(True, 6), TypeError, "domain id"),
    ],
)
def test_bad_arguments_say_what_to_pass_and_send_nothing(make_iris, standin, call, error, words):
    iris = make_iris()
    with pytest.raises(error, match=words):
        call(iris)
    assert standin.seen == []


@pytest.mark.parametrize(
    ("kwargs", "error", "words"),
    [
        ({"rate": 40}, ValueError, "at most 35"),
        ({"rate": 0}, ValueError, "above 0"),
        ({"rate": "fast"}, TypeError, "requests per second"),
        ({"base_url": "iris-api.circle.com"}, ValueError, "http"),
        ({"base_url": "https://x.example", "sandbox": True}, ValueError, "not both"),
        ({"retries": -1}, ValueError, "retries"),
    ],
)
def test_bad_options_are_refused(kwargs, error, words):
    with pytest.raises(error, match=words):
        IrisClient(cache=False, **kwargs)


def test_options_are_one_record_and_keywords_replace_its_fields(tmp_path):
    opts = IrisOptions(rate=10, cache=False, retries=2)
    with IrisClient(options=opts) as iris:
        assert iris.options == opts
        assert iris.bucket.rate == 10
        assert iris.http_cache is None
    with IrisClient(options=opts, rate=20, cache_dir=tmp_path) as iris:
        assert (iris.options.rate, iris.options.retries) == (20.0, 2)
        assert iris.options.cache_dir == tmp_path
    with pytest.raises(TypeError, match="IrisOptions"):
        IrisClient(options={"rate": 10})
    with pytest.raises(TypeError, match=r"unknown Iris option.*ratee"):
        IrisClient(cache=False, ratee=10)


def test_sandbox_default_url():
    with IrisClient(sandbox=True, cache=False) as iris:
        assert iris.base_url == "https://iris-api-sandbox.circle.com"
    with IrisClient(cache=False) as iris:
        assert iris.base_url == "https://iris-api.circle.com"


def test_a_reply_that_is_not_iris_schema_is_a_typed_error(make_iris):
    def app(environ, start_response):
        start_response("200 OK", [("Content-Type", "application/json")])
        return [b'{"status": 200, "body": {}}']

    iris = make_iris(app, retries=1)
    with pytest.raises(errors.ResponseSchemaError, match="messages"):
        iris.messages(6, UNKNOWN_TX)


def _wsgi(app):
    from cctx_research.net import WSGITransport

    return WSGITransport(app)
