"""Build real CCTP event logs with eth-abi, and write them in every input shape.

Logs are encoded from the published event signatures (topics = topic0 +
indexed params, data = the non-indexed params ABI-encoded); messages are
packed with ``eth_abi.packed``. Everything here is independent of the
decoder's own tables, so a wrong offset there fails the tests.

Other test modules import these builders: ``transfer_logs()`` gives one log
of every event and version with the values it encodes.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
from eth_abi import encode
from eth_abi.packed import encode_packed
from eth_utils import keccak

SIGNATURES = {
    ("DepositForBurn", 1): "DepositForBurn(uint64 indexed nonce, address indexed burnToken, "
    "uint256 amount, address indexed depositor, bytes32 mintRecipient, uint32 destinationDomain, "
    "bytes32 destinationTokenMessenger, bytes32 destinationCaller)",
    ("DepositForBurn", 2): "DepositForBurn(address indexed burnToken, uint256 amount, "
    "address indexed depositor, bytes32 mintRecipient, uint32 destinationDomain, "
    "bytes32 destinationTokenMessenger, bytes32 destinationCaller, uint256 maxFee, "
    "uint32 indexed minFinalityThreshold, bytes hookData)",
    ("MintAndWithdraw", 1): "MintAndWithdraw(address indexed mintRecipient, uint256 amount, "
    "address indexed mintToken)",
    ("MintAndWithdraw", 2): "MintAndWithdraw(address indexed mintRecipient, uint256 amount, "
    "address indexed mintToken, uint256 feeCollected)",
    ("MessageSent", 1): "MessageSent(bytes message)",
    ("MessageSent", 2): "MessageSent(bytes message)",
    ("MessageReceived", 1): "MessageReceived(address indexed caller, uint32 sourceDomain, "
    "uint64 indexed nonce, bytes32 sender, bytes messageBody)",
    ("MessageReceived", 2): "MessageReceived(address indexed caller, uint32 sourceDomain, "
    "bytes32 indexed nonce, bytes32 sender, uint32 indexed finalityThresholdExecuted, "
    "bytes messageBody)",
}
"""The events as Circle's contracts declare them (names and ``indexed`` kept)."""


def parse_signature(declared: str) -> tuple[str, list[tuple[str, str, bool]]]:
    """(name, [(param, type, indexed)]) of a declared event."""
    name, rest = declared.split("(", 1)
    params = []
    for part in rest.rstrip(")").split(","):
        words = part.split()
        params.append((words[-1], words[0], "indexed" in words))
    return name, params


def canonical_signature(declared: str) -> str:
    name, params = parse_signature(declared)
    return f"{name}({','.join(t for _, t, _ in params)})"


def topic0(declared: str) -> str:
    return "0x" + keccak(text=canonical_signature(declared)).hex()


def encode_event(declared: str, values: dict[str, Any]) -> tuple[list[str], str]:
    """(topics, data) of one event log, ABI-encoded with eth-abi."""
    _, params = parse_signature(declared)
    topics = [topic0(declared)]
    topics += ["0x" + encode([t], [values[n]]).hex() for n, t, indexed in params if indexed]
    data_params = [(n, t) for n, t, indexed in params if not indexed]
    data = encode([t for _, t in data_params], [values[n] for n, _ in data_params])
    return topics, "0x" + data.hex()


def pad(address: str) -> bytes:
    """An EVM address as a bytes32 (12 zero bytes, then the 20 bytes)."""
    return bytes(12) + bytes.fromhex(address[2:])


def burn_body(
    version: int,
    *,
    burn_token: str,
    mint_recipient: bytes,
    amount: int,
    message_sender: str,
    max_fee: int = 0,
    fee_executed: int = 0,
    expiration_block: int = 0,
    hook_data: bytes = b"",
) -> bytes:
    """A BurnMessage (V1) or BurnMessageV2 body, packed."""
    types = ["uint32", "bytes32", "bytes32", "uint256", "bytes32"]
    values: list[Any] = [version - 1, pad(burn_token), mint_recipient, amount, pad(message_sender)]
    if version == 2:
        types += ["uint256", "uint256", "uint256", "bytes"]
        values += [max_fee, fee_executed, expiration_block, hook_data]
    return encode_packed(types, values)


def message(
    version: int,
    *,
    source_domain: int,
    destination_domain: int,
    nonce: int | bytes,
    sender: bytes,
    recipient: bytes,
    destination_caller: bytes,
    body: bytes,
    min_finality_threshold: int = 0,
    finality_threshold_executed: int = 0,
) -> bytes:
    """A V1 message (uint64 nonce) or V2 message (bytes32 nonce, finality fields), packed."""
    if version == 1:
        return encode_packed(
            ["uint32", "uint32", "uint32", "uint64", "bytes32", "bytes32", "bytes32", "bytes"],
            [
                0,
                source_domain,
                destination_domain,
                nonce,
                sender,
                recipient,
                destination_caller,
                body,
            ],
        )
    return encode_packed(
        [
            "uint32",
            "uint32",
            "uint32",
            "bytes32",
            "bytes32",
            "bytes32",
            "bytes32",
            "uint32",
            "uint32",
            "bytes",
        ],
        [
            1,
            source_domain,
            destination_domain,
            nonce,
            sender,
            recipient,
            destination_caller,
            min_finality_threshold,
            finality_threshold_executed,
            body,
        ],
    )


@dataclass
class Log:
    """One encoded log and what it should decode to."""

    event: str
    version: int
    topics: list[str]
    data: str
    block_number: int
    tx_hash: str
    log_index: int
    address: str
    expected: dict[str, Any] = field(default_factory=dict)
    transaction_index: int = 0
    block_timestamp: int | None = None
    removed: bool = False

    def node(self, *, with_time: bool = True) -> dict[str, Any]:
        """The object a node returns in eth_getLogs."""
        out = {
            "address": self.address,
            "topics": self.topics,
            "data": self.data,
            "blockNumber": hex(self.block_number),
            "transactionHash": self.tx_hash,
            "transactionIndex": hex(self.transaction_index),
            "blockHash": "0x" + keccak(self.block_number.to_bytes(8, "big")).hex(),
            "logIndex": hex(self.log_index),
            "removed": self.removed,
        }
        if with_time and self.block_timestamp is not None:
            out["blockTimestamp"] = hex(self.block_timestamp)
        return out


# TokenMessengers (Circle's "CCTP EVM contracts" pages): a message's header sender is the
# TokenMessenger of its source domain, or the message is not a token transfer.
ETHEREUM_V1_MESSENGER = "0xbd3fa81b58ba92a82136038b25adec7066af3155"
ARBITRUM_V1_MESSENGER = "0x19330d10d9cc8751218eaf51e8885d058642e08a"
V2_MESSENGER = "0x28b5a0e9c621a5badaa536219b3a228c8168cf5d"


# Circle's contracts that emit each event (Circle's "CCTP EVM contracts" pages, V1 per chain;
# V2's CREATE2 addresses, the same on every EVM chain): DepositForBurn and MintAndWithdraw
# the TokenMessenger, MessageSent and MessageReceived the MessageTransmitter.
_V1 = {  # (TokenMessenger, MessageTransmitter)
    "ethereum": (ETHEREUM_V1_MESSENGER, "0x0a992d191deec32afe36203ad87d7d289a738f81"),
    "base": ("0x1682ae6375c4e4a97e4b583bc394c861a46d8962",
             "0xad09780d193884d503182ad4588450c416d6f9d4"),
    "arbitrum": (ARBITRUM_V1_MESSENGER, "0xc30362313fbba5cf9163f0bb16a0e01f01a896ca"),
}  # fmt: skip
V2_TRANSMITTER = "0x81d40f21f12a8f0e3252bccb954d722d4c464b64"
EMITTERS = {
    chain: {
        ("DepositForBurn", 1): messenger,
        ("MintAndWithdraw", 1): messenger,
        ("MessageSent", 1): transmitter,
        ("MessageReceived", 1): transmitter,
        ("DepositForBurn", 2): V2_MESSENGER,
        ("MintAndWithdraw", 2): V2_MESSENGER,
        ("MessageSent", 2): V2_TRANSMITTER,
        ("MessageReceived", 2): V2_TRANSMITTER,
    }
    for chain, (messenger, transmitter) in _V1.items()
}
"""chain -> (event, version) -> the address of the contract that emits it there."""


def addr(rng: random.Random) -> str:
    return "0x" + rng.randbytes(20).hex()


def make_log(
    event: str,
    version: int,
    values: dict[str, Any],
    expected: dict[str, Any],
    *,
    rng: random.Random,
    block_number: int,
    log_index: int,
    block_timestamp: int | None = None,
    chain: str = "base",
) -> Log:
    """One log, emitted by Circle's contract for the event on ``chain`` (see :data:`EMITTERS`)."""
    topics, data = encode_event(SIGNATURES[(event, version)], values)
    tx_hash = "0x" + rng.randbytes(32).hex()
    addr(rng)  # drawn still, so that every other value stays what it was
    return Log(
        event,
        version,
        topics,
        data,
        block_number,
        tx_hash,
        log_index,
        EMITTERS[chain][(event, version)],
        expected,
        rng.randrange(200),
        block_timestamp,
    )


def transfer_logs(
    seed: int = 1,
    *,
    start_block: int = 19_000_000,
    start_time: int = 1_717_200_000,
    chain: str = "base",
) -> list[Log]:
    """One log of every event and version (8 logs), with the values each encodes, emitted by
    Circle's contracts on ``chain``."""
    rng = random.Random(seed)
    out: list[Log] = []

    def add(event: str, version: int, values: dict[str, Any], expected: dict[str, Any]) -> None:
        i = len(out)
        out.append(
            make_log(
                event,
                version,
                values,
                expected,
                rng=rng,
                block_number=start_block + i,
                log_index=i % 3 + 1,
                block_timestamp=start_time + 12 * i,
                chain=chain,
            )
        )

    token, depositor, recipient = addr(rng), addr(rng), addr(rng)
    solana = rng.randbytes(32)  # a non-EVM recipient stays 32 bytes
    messenger, caller = addr(rng), addr(rng)
    amount = 123_456_789_000
    add(
        "DepositForBurn",
        1,
        {
            "nonce": 2**63 + 5,
            "burnToken": token,
            "amount": amount,
            "depositor": depositor,
            "mintRecipient": pad(recipient),
            "destinationDomain": 6,
            "destinationTokenMessenger": pad(messenger),
            "destinationCaller": bytes(32),
        },
        {
            "nonce": str(2**63 + 5),
            "burn_token": token,
            "amount_raw": amount,
            "message_sender": depositor,
            "mint_recipient": recipient,
            "destination_domain": 6,
            "destination_token_messenger": messenger,
            "destination_caller": "0x" + "00" * 20,
        },
    )
    hook = rng.randbytes(45)
    add(
        "DepositForBurn",
        2,
        {
            "burnToken": token,
            "amount": 10**12,
            "depositor": depositor,
            "mintRecipient": solana,
            "destinationDomain": 5,
            "destinationTokenMessenger": pad(messenger),
            "destinationCaller": pad(caller),
            "maxFee": 1_000_000,
            "minFinalityThreshold": 1000,
            "hookData": hook,
        },
        {
            "nonce": None,
            "burn_token": token,
            "amount_raw": 10**12,
            "message_sender": depositor,
            "mint_recipient": "0x" + solana.hex(),
            "destination_domain": 5,
            "destination_token_messenger": messenger,
            "destination_caller": caller,
            "max_fee_raw": 1_000_000,
            "min_finality_threshold": 1000,
            "hook_data": "0x" + hook.hex(),
        },
    )
    add(
        "MintAndWithdraw",
        1,
        {"mintRecipient": recipient, "amount": amount, "mintToken": token},
        {"mint_recipient": recipient, "amount_raw": amount, "mint_token": token, "fee_raw": None},
    )
    add(
        "MintAndWithdraw",
        2,
        {"mintRecipient": recipient, "amount": 999_900, "mintToken": token, "feeCollected": 100},
        {"mint_recipient": recipient, "amount_raw": 999_900, "mint_token": token, "fee_raw": 100},
    )
    body1 = burn_body(
        1, burn_token=token, mint_recipient=pad(recipient), amount=amount, message_sender=depositor
    )
    msg1 = message(
        1,
        source_domain=0,
        destination_domain=6,
        nonce=777_001,
        sender=pad(ETHEREUM_V1_MESSENGER),
        recipient=pad(messenger),
        destination_caller=bytes(32),
        body=body1,
    )
    body_expected1 = {
        "burn_token": token,
        "mint_recipient": recipient,
        "amount_raw": amount,
        "message_sender": depositor,
        "max_fee_raw": None,
        "fee_executed_raw": None,
        "expiration_block": None,
        "hook_data": None,
    }
    add(
        "MessageSent",
        1,
        {"message": msg1},
        {
            "message": "0x" + msg1.hex(),
            "message_version": 0,
            "source_domain": 0,
            "destination_domain": 6,
            "nonce": "777001",
            "sender": ETHEREUM_V1_MESSENGER,
            "recipient": messenger,
            "destination_caller": "0x" + "00" * 20,
            "min_finality_threshold": None,
            "finality_threshold_executed": None,
            "cctp_version": 1,
            **body_expected1,
        },
    )
    body2 = burn_body(
        2,
        burn_token=token,
        mint_recipient=pad(recipient),
        amount=5 * 10**9,
        message_sender=depositor,
        max_fee=500_000,
        hook_data=hook,
    )
    msg2 = message(
        2,
        source_domain=0,
        destination_domain=3,
        nonce=bytes(32),
        sender=pad(V2_MESSENGER),
        recipient=pad(messenger),
        destination_caller=pad(caller),
        body=body2,
        min_finality_threshold=2000,
    )
    body_expected2 = {
        "burn_token": token,
        "mint_recipient": recipient,
        "amount_raw": 5 * 10**9,
        "message_sender": depositor,
        "max_fee_raw": 500_000,
        "fee_executed_raw": 0,
        "expiration_block": 0,
        "hook_data": "0x" + hook.hex(),
    }
    add(
        "MessageSent",
        2,
        {"message": msg2},
        {
            "message": "0x" + msg2.hex(),
            "message_version": 1,
            "source_domain": 0,
            "destination_domain": 3,
            "nonce": "0x" + "00" * 32,
            "sender": V2_MESSENGER,
            "recipient": messenger,
            "destination_caller": caller,
            "min_finality_threshold": 2000,
            "finality_threshold_executed": 0,
            "cctp_version": 2,
            **body_expected2,
        },
    )
    add(
        "MessageReceived",
        1,
        {
            "caller": caller,
            "sourceDomain": 3,
            "nonce": 777_001,
            "sender": pad(ARBITRUM_V1_MESSENGER),
            "messageBody": body1,
        },
        {
            "caller": caller,
            "source_domain": 3,
            "nonce": "777001",
            "sender": ARBITRUM_V1_MESSENGER,
            "finality_threshold_executed": None,
            **body_expected1,
        },
    )
    nonce2 = rng.randbytes(32)
    executed_body = burn_body(
        2,
        burn_token=token,
        mint_recipient=pad(recipient),
        amount=5 * 10**9,
        message_sender=depositor,
        max_fee=500_000,
        fee_executed=4_000,
        expiration_block=123,
        hook_data=b"",
    )
    add(
        "MessageReceived",
        2,
        {
            "caller": caller,
            "sourceDomain": 6,
            "nonce": nonce2,
            "sender": pad(V2_MESSENGER),
            "finalityThresholdExecuted": 1000,
            "messageBody": executed_body,
        },
        {
            "caller": caller,
            "source_domain": 6,
            "nonce": "0x" + nonce2.hex(),
            "sender": V2_MESSENGER,
            "finality_threshold_executed": 1000,
            **body_expected2,
            "fee_executed_raw": 4_000,
            "expiration_block": 123,
            "hook_data": "0x",
        },
    )
    return out


# ---------------------------------------------------------------- writers


def write_json(path: Path, payload: Any) -> Path:
    path.write_text(json.dumps(payload))
    return path


def response(logs: list[dict[str, Any]], request_id: int = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "result": logs}


def write_jsonl(path: Path, items: list[Any]) -> Path:
    path.write_text("".join(json.dumps(item) + "\n" for item in items))
    return path


def cryo_table(logs: list[Log], *, chain_id: int | None, binary: bool) -> pa.Table:
    """cryo's logs dataset: binary columns as bytes (Parquet) or 0x hex (CSV)."""

    def col(values: list[str | None]) -> pa.Array:
        if binary:
            return pa.array(
                [None if v is None else bytes.fromhex(v[2:]) for v in values], pa.binary()
            )
        return pa.array(values, pa.string())

    topics = [[lg.topics[i] if i < len(lg.topics) else None for lg in logs] for i in range(4)]
    columns = {
        "block_number": pa.array([lg.block_number for lg in logs], pa.uint32()),
        "transaction_index": pa.array([lg.transaction_index for lg in logs], pa.uint32()),
        "log_index": pa.array([lg.log_index for lg in logs], pa.uint32()),
        "transaction_hash": col([lg.tx_hash for lg in logs]),
        "address": col([lg.address for lg in logs]),
        "topic0": col(topics[0]),
        "topic1": col(topics[1]),
        "topic2": col(topics[2]),
        "topic3": col(topics[3]),
        "data": col([lg.data for lg in logs]),
        "n_data_bytes": pa.array([(len(lg.data) - 2) // 2 for lg in logs], pa.uint32()),
    }
    if chain_id is not None:
        columns["chain_id"] = pa.array([chain_id] * len(logs), pa.uint64())
    return pa.table(columns)


def write_cryo(path: Path, logs: list[Log], *, chain_id: int | None = 8453) -> Path:
    if path.suffix == ".parquet":
        pq.write_table(cryo_table(logs, chain_id=chain_id, binary=True), path)
    else:
        pacsv.write_csv(cryo_table(logs, chain_id=chain_id, binary=False), path)
    return path


def block_objects(logs: list[Log]) -> list[dict[str, Any]]:
    """eth_getBlockByNumber results (the fields that matter) for the logs' blocks."""
    seen = {lg.block_number: lg.block_timestamp for lg in logs}
    return [
        {"number": hex(n), "timestamp": hex(t), "hash": "0x" + "00" * 32}
        for n, t in sorted(seen.items())
    ]


def write_cryo_blocks(path: Path, logs: list[Log], *, chain_id: int | None = 8453) -> Path:
    seen = sorted({lg.block_number: lg.block_timestamp for lg in logs}.items())
    columns = {
        "block_number": pa.array([n for n, _ in seen], pa.uint32()),
        "timestamp": pa.array([t for _, t in seen], pa.uint32()),
        "block_hash": pa.array([bytes(32)] * len(seen), pa.binary()),
    }
    if chain_id is not None:
        columns["chain_id"] = pa.array([chain_id] * len(seen), pa.uint64())
    table = pa.table(columns)
    if path.suffix == ".parquet":
        pq.write_table(table, path)
    else:
        pacsv.write_csv(table.drop_columns(["block_hash"]), path)
    return path


# ---------------------------------------------------------------- committed fixtures

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "evm"


def fixture_logs() -> list[Log]:
    """The logs of the committed fixtures: one per event and version, Ethereum contracts."""
    return transfer_logs(seed=2024, start_block=20_000_000, start_time=1_717_977_611,
                         chain="ethereum")  # fmt: skip


def write_fixtures(directory: Path = FIXTURES) -> list[Path]:
    """(Re)write tests/fixtures/evm: one small file per input format."""
    directory.mkdir(parents=True, exist_ok=True)
    logs = fixture_logs()
    nodes = [lg.node() for lg in logs]
    return [
        write_json(directory / "getlogs_list.json", nodes),
        write_json(directory / "getlogs_response.json", response(nodes)),
        write_json(
            directory / "getlogs_responses.json", [response(nodes[:4], 1), response(nodes[4:], 2)]
        ),
        write_jsonl(directory / "getlogs.jsonl", nodes),
        write_jsonl(directory / "getlogs_no_time.jsonl", [lg.node(with_time=False) for lg in logs]),
        write_cryo(directory / "cryo_logs.parquet", logs, chain_id=1),
        write_cryo(directory / "cryo_logs.csv", logs, chain_id=1),
        write_json(
            directory / "blocks_rpc.json",
            [{"jsonrpc": "2.0", "id": i, "result": b} for i, b in enumerate(block_objects(logs))],
        ),
        write_cryo_blocks(directory / "cryo_blocks.parquet", logs, chain_id=1),
        write_cryo_blocks(directory / "cryo_blocks.csv", logs, chain_id=1),
    ]


if __name__ == "__main__":  # python tests/ingest/logs.py rewrites the fixtures
    for written in write_fixtures():
        print(written)
