"""Conformance of the five operations over real loopback HTTP (waitress + requests)."""

from __future__ import annotations

import json
import logging
import socket

import pytest

from cctx_research import chains
from cctx_research.service.fields import OPERATIONS

from .conftest import API_KEY, CLOCK, CLOCK_S, PROJECT_ID, addr

INT, STR, BOOL, LIST, DICT = "int", "str", "bool", "list", "dict"

SUMMARY = {
    "id": STR,
    "amount": INT,
    "timestamp": INT,
    "isCompleted": BOOL,
    "sourceDomain": STR,
    "destinationDomain": STR,
    "mintRecipient": STR,
    "messageSender": STR,
    "burnToken": STR,
    "destinationCaller": STR,
    "detinationTokenMessenger": STR,
}
GROUP = {
    "sourceChain": STR,
    "destinationChain": STR,
    "totalAmount": INT,
    "chain": STR,
    "transactions": LIST,
}
DETAIL = {
    **SUMMARY,
    "_id": STR,
    "transactionHash": STR,
    "entityId": STR,
    "blockNumber": INT,
    "chainId": STR,
    "instanceId": STR,
    "sourceChain": STR,
    "destinationChain": STR,
}
RECEIVED_ITEM = {
    "id": STR,
    "amount": INT,
    "timestamp": INT,
    "sourceChain": STR,
    "destinationChain": STR,
    "transactionType": STR,
    "transactionHash": STR,
}
VOLUME = {
    "startDate": INT,
    "endDate": INT,
    "mintVolume": INT,
    "burnVolume": INT,
    "totalVolume": INT,
    "mintCount": INT,
    "burnCount": INT,
    "totalCount": INT,
}
TOP_ITEM = {"address": STR, "totalVolume": INT, "transactionCount": INT}


def is_type(value, kind: str) -> bool:
    if kind == INT:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, {STR: str, BOOL: bool, LIST: list, DICT: dict}[kind])


def check(obj: dict, spec: dict) -> None:
    """Exactly the documented fields, each of its JSON type."""
    assert set(obj) == set(spec)
    for name, kind in spec.items():
        assert is_type(obj[name], kind), (name, obj[name])


def ok(response) -> dict | list:
    assert response.status_code == 200, response.text
    assert response.headers["Content-Type"].startswith("application/json")
    envelope = response.json()
    assert set(envelope) == {"status", "body"}
    assert envelope["status"] == 200
    return envelope["body"]


def error(response, status: int, code: str) -> str:
    assert response.status_code == status, response.text
    envelope = response.json()
    assert envelope == {
        "status": status,
        "body": {"error": code, "message": envelope["body"]["message"]},
    }
    assert isinstance(envelope["body"]["message"], str)
    assert API_KEY not in response.text
    return envelope["body"]["message"]


def is_bytes32(value: str) -> bool:
    return len(value) == 66 and value == value.lower() and value.startswith("0x")


def is_address(value: str) -> bool:
    return len(value) == 42 and value == value.lower() and value.startswith("0x")


# --------------------------------------------------------------------------
# the five operations


def test_mint_listing_fields_types_and_defaults(post, store):
    body = ok(post("transactions-mint", {}))
    assert body == store.mints(CLOCK_S - 86_400, CLOCK_S)
    assert sum(len(g["transactions"]) for g in body) == 100  # default limit
    for group in body:
        check(group, GROUP)
        assert group["chain"] == group["destinationChain"]
        for t in group["transactions"]:
            check(t, SUMMARY)
            assert t["isCompleted"] is True
            assert CLOCK_S - 86_400 <= t["timestamp"] <= CLOCK_S
            assert int(t["sourceDomain"]) in chains.DEFAULT_DOMAINS
            assert int(t["destinationDomain"]) in chains.DEFAULT_DOMAINS
            assert t["id"].split("_")[1:] == [group["sourceChain"], group["destinationChain"]]
            for name in ("mintRecipient", "destinationCaller", "detinationTokenMessenger"):
                assert is_bytes32(t[name])
            assert is_address(t["messageSender"])
            assert is_address(t["burnToken"])


@pytest.mark.parametrize(
    "domains",
    ['["0","1","2","3","6","7"]', "[0,1,2,3,6,7]", [0, 1, 2, 3, 6, 7], ["7", 6, "3", 2, 1, 0]],
)
def test_mint_listing_default_domains_in_every_form(post, domains):
    default = ok(post("transactions-mint", {"limit": 1000}))
    given = ok(
        post(
            "transactions-mint",
            {"limit": 1000, "sourceDomain": domains, "destinationDomain": domains},
        )
    )
    assert given == default


def test_mint_listing_filters_domains_and_pages(post, store):
    window = {"startDate": str(CLOCK_S - 2 * 86_400), "endDate": CLOCK_S}
    only = ok(post("transactions-mint", {**window, "sourceDomain": "5", "limit": "1000"}))
    assert only
    assert {g["transactions"][0]["sourceDomain"] for g in only} == {"5"}
    assert {g["sourceChain"] for g in only} == {"solana"}
    assert ok(post("transactions-mint", {**window, "sourceDomain": 5, "limit": 1000})) == only
    page3 = ok(post("transactions-mint", {**window, "page": 3, "limit": 7}))
    assert page3 == store.mints(CLOCK_S - 2 * 86_400, CLOCK_S, page=3, limit=7)
    assert sum(len(g["transactions"]) for g in page3) == 7


def test_hash_lookup_of_burn_and_mint(post, ledger):
    row = ledger[ledger["mint_timestamp"] < CLOCK].iloc[0]
    for kind, column in (("burn", "burn_tx_hash"), ("mint", "mint_tx_hash")):
        body = ok(post("transactions-txHash", {"txHash": row[column].upper().replace("0X", "0x")}))
        assert set(body) == {"transactionType", "transaction"}
        assert body["transactionType"] == kind
        detail = body["transaction"]
        check(detail, DETAIL)
        assert detail["transactionHash"] == row[column]
        assert detail["id"] == row["transfer_id"]
        assert detail["amount"] == row["amount_raw"]
        assert detail["sourceDomain"] == str(row["source_domain"])
        assert detail["destinationDomain"] == str(row["destination_domain"])
        assert detail["sourceChain"] == chains.chain_id(int(row["source_domain"]))
        assert detail["destinationChain"] == chains.chain_id(int(row["destination_domain"]))
        assert detail["mintRecipient"] == "0x" + "0" * 24 + row["mint_recipient"][2:]
        assert detail["messageSender"] == row["message_sender"]
        assert detail["burnToken"] == row["burn_token"]
        assert detail["isCompleted"] is True


def test_recipient_listing_in_both_address_forms(post, store):
    who = addr(0xB000 + 5)
    window = {"startDate": CLOCK_S - 3 * 86_400, "endDate": CLOCK_S}
    body = ok(post("transactions-address-recipient", {"address": who, **window, "limit": 1000}))
    assert set(body) == {"address", "totalTransactions", "transactions"}
    assert body["address"] == who
    assert is_type(body["totalTransactions"], INT)
    assert body["totalTransactions"] == len(body["transactions"]) > 10
    for item in body["transactions"]:
        check(item, RECEIVED_ITEM)
        assert item["transactionType"] in ("mint", "burn")
    assert {i["transactionType"] for i in body["transactions"]} == {"mint", "burn"}
    for form in (who.upper().replace("0X", "0x"), "0x" + "0" * 24 + who[2:].upper()):
        again = ok(
            post("transactions-address-recipient", {"address": form, **window, "limit": 1000})
        )
        assert again == body
    paged = ok(
        post("transactions-address-recipient", {"address": who, **window, "page": 2, "limit": 3})
    )
    assert paged["transactions"] == body["transactions"][3:6]
    assert paged["totalTransactions"] == body["totalTransactions"]
    default = ok(post("transactions-address-recipient", {"address": who}))
    assert default == store.received(who, CLOCK_S - 86_400, CLOCK_S)


def test_volume_fields_and_defaults(post, store):
    body = ok(post("transactions-volume", {}))
    check(body, VOLUME)
    assert (body["startDate"], body["endDate"]) == (CLOCK_S - 86_400, CLOCK_S)
    assert body == store.volume(CLOCK_S - 86_400, CLOCK_S)
    assert body["burnCount"] > 0
    assert body["totalVolume"] == body["mintVolume"] + body["burnVolume"]
    only_end = ok(post("transactions-volume", {"endDate": str(CLOCK_S - 3600)}))
    assert (only_end["startDate"], only_end["endDate"]) == (CLOCK_S - 3600 - 86_400, CLOCK_S - 3600)


def test_volume_accepts_an_empty_body(post):
    body = ok(post("transactions-volume", data=b"", headers={"Content-Type": "application/json"}))
    assert body["endDate"] == CLOCK_S


def test_top_senders_fields(post, store):
    body = ok(post("stats-senders", {"limit": "5"}))
    assert set(body) == {"startDate", "endDate", "topRecipients"}
    assert (body["startDate"], body["endDate"]) == (CLOCK_S - 86_400, CLOCK_S)
    assert len(body["topRecipients"]) == 5
    for item in body["topRecipients"]:
        check(item, TOP_ITEM)
        assert is_address(item["address"])
    volumes = [i["totalVolume"] for i in body["topRecipients"]]
    assert volumes == sorted(volumes, reverse=True)
    assert body == store.top_senders(CLOCK_S - 86_400, CLOCK_S, limit=5)
    every = store.top_senders(CLOCK_S - 86_400, CLOCK_S, limit=100)["topRecipients"]
    assert 5 < len(every) < 100  # the default limit of 100 holds every sender of the day
    assert ok(post("stats-senders", {}))["topRecipients"] == every


# --------------------------------------------------------------------------
# authentication and errors


@pytest.mark.parametrize("operation", sorted(OPERATIONS))
@pytest.mark.parametrize("key", [None, "", "wrong", API_KEY + "x", API_KEY.upper()])
def test_every_operation_requires_the_key(post, operation, key):
    headers = {"x-api-key": key} if key is not None else {}
    response = post(operation, {}, key=None, headers=headers)
    error(response, 401, "unauthorized")


def test_key_header_name_is_case_insensitive(post):
    ok(post("transactions-volume", {}, key=None, headers={"X-API-KEY": API_KEY}))


def test_key_is_checked_before_anything_else(post, server, http):
    error(post("nope", {}, key="wrong"), 401, "unauthorized")
    error(post("transactions-volume", {}, key="wrong", project="other"), 401, "unauthorized")
    r = http.get(f"{server.url}/rest/{PROJECT_ID}/transactions-volume", timeout=5)
    error(r, 401, "unauthorized")


@pytest.mark.parametrize(
    ("operation", "body", "field"),
    [
        ("transactions-mint", {"limit": 1001}, "limit"),
        ("transactions-mint", {"limit": 0}, "limit"),
        ("transactions-mint", {"limit": "ten"}, "limit"),
        ("transactions-mint", {"limit": 10.5}, "limit"),
        ("transactions-mint", {"limit": True}, "limit"),
        ("transactions-mint", {"page": 0}, "page"),
        ("transactions-mint", {"page": -1}, "page"),
        ("transactions-mint", {"page": None}, "page"),
        ("transactions-mint", {"sourceDomain": "base"}, "sourceDomain"),
        ("transactions-mint", {"sourceDomain": "[0,"}, "sourceDomain"),
        ("transactions-mint", {"destinationDomain": []}, "destinationDomain"),
        ("transactions-mint", {"destinationDomain": [[0]]}, "destinationDomain"),
        ("transactions-mint", {"startDate": "2024-07-01"}, "startDate"),
        ("transactions-mint", {"startDate": 1719792000000}, "startDate"),
        ("transactions-mint", {"endDate": -5}, "endDate"),
        ("transactions-mint", {"startDate": CLOCK_S, "endDate": CLOCK_S - 1}, "startDate"),
        ("transactions-volume", {"startDate": CLOCK_S + 10}, "startDate"),
        ("transactions-volume", {"foo": 1}, "foo"),
        ("transactions-txHash", {}, "txHash"),
        ("transactions-txHash", {"txHash": "0x1234"}, "txHash"),
        ("transactions-txHash", {"txHash": 12}, "txHash"),
        ("transactions-address-recipient", {}, "address"),
        ("transactions-address-recipient", {"address": "0xabc"}, "address"),
        ("transactions-address-recipient", {"address": addr(1), "limit": 5000}, "limit"),
        ("stats-senders", {"limit": "1001"}, "limit"),
        ("stats-senders", {"page": 2}, "page"),
    ],
)
def test_invalid_fields_are_400s_naming_the_field(post, operation, body, field):
    message = error(post(operation, body), 400, "invalid_field")
    assert field in message


def test_unknown_fields_name_the_allowed_ones(post):
    message = error(post("stats-senders", {"limits": 5}), 400, "invalid_field")
    assert "startDate, endDate, limit" in message


@pytest.mark.parametrize(
    "data",
    [b"{", b"[]", b'"x"', b"null", b"\xff\xfe", b'{"limit": NaN}', b'{"a":1,"a":2}', b"[" * 5000],
)
def test_bodies_that_are_not_a_json_object(post, data):
    r = post("transactions-volume", data=data, headers={"Content-Type": "application/json"})
    error(r, 400, "invalid_json")


def test_duplicate_keys_are_rejected(post):
    data = b'{"limit": 5, "limit": 6}'
    r = post("stats-senders", data=data, headers={"Content-Type": "application/json"})
    assert "duplicate" in error(r, 400, "invalid_json")


@pytest.mark.parametrize(
    "content_type",
    [None, "text/plain", "application/x-www-form-urlencoded", "application/json; charset=latin-1"],
)
def test_wrong_content_type_is_415(post, content_type):
    headers = {"Content-Type": content_type} if content_type else {}
    r = post("transactions-volume", data=b"{}", headers=headers)
    error(r, 415, "unsupported_media_type")


def test_json_content_type_with_parameters_is_accepted(post):
    for value in ("application/json; charset=utf-8", "Application/JSON;charset=UTF-8"):
        ok(post("transactions-volume", data=b"{}", headers={"Content-Type": value}))


def test_bodies_over_64_kib_are_413(post):
    padding = " " * 65_537
    r = post(
        "transactions-volume",
        data=("{}" + padding).encode(),
        headers={"Content-Type": "application/json"},
    )
    error(r, 413, "payload_too_large")
    fits = ("{}" + " " * (65_536 - 2)).encode()
    ok(post("transactions-volume", data=fits, headers={"Content-Type": "application/json"}))


@pytest.mark.parametrize("method", ["GET", "PUT", "DELETE", "PATCH"])
def test_methods_other_than_post_are_405(server, http, method):
    url = f"{server.url}/rest/{PROJECT_ID}/transactions-volume"
    r = http.request(method, url, headers={"x-api-key": API_KEY}, timeout=5)
    error(r, 405, "method_not_allowed")
    assert r.headers["Allow"] == "POST"


def test_head_replies_have_no_body(server):
    # Read the raw bytes: a body after a HEAD reply would be taken as the
    # start of the next reply on a keep-alive connection.
    host, port = server.url.removeprefix("http://").split(":")
    path = f"/rest/{PROJECT_ID}/transactions-volume"
    request = f"HEAD {path} HTTP/1.1\r\nHost: {host}\r\nx-api-key: {API_KEY}\r\n"
    with socket.create_connection((host, int(port)), timeout=5) as sock:
        sock.sendall((request + "Connection: close\r\n\r\n").encode())
        raw = b""
        while chunk := sock.recv(65536):
            raw += chunk
    head, _, rest = raw.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 405")
    assert rest == b""


def test_unknown_project_operation_hash_and_path_are_404(post, server, http):
    error(post("transactions-volume", {}, project="another-project"), 404, "not_found")
    error(post("transactions-everything", {}), 404, "not_found")
    error(post("transactions-txHash", {"txHash": "0x" + "ab" * 32}), 404, "not_found")
    r = http.post(f"{server.url}/elsewhere", json={}, headers={"x-api-key": API_KEY}, timeout=5)
    error(r, 404, "not_found")
    r = http.post(
        f"{server.url}/rest/{PROJECT_ID}/transactions-volume/extra",
        json={},
        headers={"x-api-key": API_KEY},
        timeout=5,
    )
    error(r, 404, "not_found")


def test_one_info_line_per_request_and_never_the_key(post, caplog):
    with caplog.at_level(logging.INFO, logger="cctx_research.service.app"):
        ok(post("transactions-volume", {}))
        error(post("transactions-volume", {}, key="wrong-key-value"), 401, "unauthorized")
        error(post("stats-senders", {"limit": 0}), 400, "invalid_field")
    lines = [r.getMessage() for r in caplog.records if r.name == "cctx_research.service.app"]
    assert len(lines) == 3
    assert "transactions-volume -> 200" in lines[0]
    assert "transactions-volume -> 401" in lines[1]
    assert "stats-senders -> 400" in lines[2]
    for text in lines:
        assert API_KEY not in text
        assert "wrong-key-value" not in text


def test_replies_are_plain_json(post):
    r = post("transactions-volume", {})
    assert json.loads(r.content.decode("ascii")) == r.json()


def test_every_operation_has_one_handler_taking_a_parsed_request(store):
    from cctx_research.service.handlers import HANDLERS, Reject, handle, parse

    assert list(HANDLERS) == list(OPERATIONS)
    request = parse(store, "transactions-volume", {"endDate": CLOCK_S})
    assert request.args == {"start": CLOCK_S - 86_400, "end": CLOCK_S}
    assert handle(store, request) == store.volume(CLOCK_S - 86_400, CLOCK_S)
    with pytest.raises(Reject, match="limit") as bad:
        parse(store, "stats-senders", {"limit": 0})
    assert (bad.value.status, bad.value.code) == (400, "invalid_field")
    missing = parse(store, "transactions-txHash", {"txHash": "0x" + "ab" * 32})
    with pytest.raises(Reject, match="no transaction with that hash") as absent:
        handle(store, missing)
    assert (absent.value.status, absent.value.code) == (404, "not_found")


def test_the_app_never_shows_its_key(store):
    from cctx_research.service.app import make_app

    app = make_app(store, api_key=API_KEY, project_id=PROJECT_ID)
    assert API_KEY not in repr(app)
