// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.20;

/// Replays recorded event logs on a local node.
///
/// Set (anvil_setCode) at the real addresses of Circle's CCTP contracts, it emits,
/// as those contracts, logs recorded from them: `replay` walks the logs in order and
/// emits each one itself or, when the log belongs to another address, through that
/// address (which holds this code too), so that a burn's MessageSent (the transmitter)
/// and DepositForBurn (the messenger) share one transaction, as on a real chain.
///
/// `localDomain` answers as a MessageTransmitter's getter does (the tests set its storage
/// slot 0 with anvil_setStorageAt to the chain's CCTP domain).
contract LogReplay {
    uint32 public localDomain;

    function replay(address[] calldata emitters, bytes32[][] calldata topics, bytes[] calldata data)
        external
    {
        require(emitters.length == topics.length && topics.length == data.length, "lengths");
        for (uint256 i = 0; i < emitters.length; i++) {
            if (emitters[i] == address(this)) {
                emitOne(topics[i], data[i]);
            } else {
                LogReplay(emitters[i]).emitOne(topics[i], data[i]);
            }
        }
    }

    function emitOne(bytes32[] calldata topics, bytes calldata data) public {
        bytes memory d = data;
        uint256 n = topics.length;
        require(n <= 4, "topics");
        assembly {
            let p := add(d, 32)
            let len := mload(d)
            switch n
            case 0 { log0(p, len) }
            case 1 { log1(p, len, calldataload(topics.offset)) }
            case 2 { log2(p, len, calldataload(topics.offset), calldataload(add(topics.offset, 32))) }
            case 3 {
                log3(p, len, calldataload(topics.offset), calldataload(add(topics.offset, 32)),
                    calldataload(add(topics.offset, 64)))
            }
            default {
                log4(p, len, calldataload(topics.offset), calldataload(add(topics.offset, 32)),
                    calldataload(add(topics.offset, 64)), calldataload(add(topics.offset, 96)))
            }
        }
    }
}
