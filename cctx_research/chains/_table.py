"""The built-in CCTP registry as data: domains, contract addresses, burnable tokens.

:mod:`cctx_research.chains` builds its look-ups from these tables; nothing
else should read them (use the functions of :mod:`cctx_research.chains`).
Addresses are lowercase hex: EVM contracts and tokens as ``0x`` + 40 digits,
non-EVM programs, packages and tokens in their 32-byte CCTP form (``0x`` + 64
digits; the chain's own spelling is given in a comment next to each).

Sources, as of November 2026 (a fact we could not confirm at a source is
marked ``unconfirmed`` where it is used):

- Domains, chain names and Fast Transfer sources: Circle, "Supported
  blockchains and domains" (developers.circle.com/cctp/concepts/
  supported-chains-and-domains), "CCTP V1 domains"
  (developers.circle.com/cctp/v1/supported-domains), "Finality and block
  confirmations"; Circle's CCTP release notes 2026 (EDGE testnet 2026-02-09,
  Injective 2026-05-06, Stellar mainnet 2026-05-18, Cronos mainnet
  2026-06-26); the ``DomainId`` enumeration of the cctp-rs crate (domains 28
  EDGE, 29 Injective, 30 Morph, 31 Pharos, 32 Cronos, 33 Plasma, 37 X Layer;
  20, 23, 24 and 34-36 are unassigned there); Pharos's own CCTP page
  (docs.pharos.xyz, domain 31).
- Contract addresses: Circle, "Contract addresses" (V2, EVM), "CCTP EVM
  contracts and interfaces V1", "Solana programs", "Starknet contracts",
  "Stellar contracts"; circlefin/noble-cctp, circlefin/sui-cctp,
  circlefin/aptos-cctp (package and module addresses as their integrators
  publish them); L2BEAT's discovery of Circle's contracts on Ethereum.
- Tokens: Circle, "USDC contract addresses", "EURC contract addresses",
  "USYC contract addresses"; Circle's USDC release notes 2026 (Pharos
  2026-04-15, Injective 2026-05-05, Cronos 2026-06-22); Circle's blog "Now
  available: native USDC and CCTP on X Layer" (2026-08-06).
- EVM chain ids: each chain's documentation (EDGE 3343, Injective EVM 1776,
  Morph 2818, Pharos 1672, Cronos 25, Plasma 9745, X Layer 196).
"""

from __future__ import annotations

# fmt: off
# (domain, name, label, EVM chain id, V1, V2, fast source, address format, explorer, aliases)
DOMAINS: tuple[tuple, ...] = (
    (0, "ethereum", "Ethereum", "1", 1, 1, 1, "evm", "https://etherscan.io",
     ("eth", "mainnet", "ethereum mainnet")),
    (1, "avalanche", "Avalanche C-Chain", "43114", 1, 1, 0, "evm", "https://snowtrace.io",
     ("avax", "avalanche c-chain")),
    (2, "optimism", "OP Mainnet", "10", 1, 1, 1, "evm", "https://optimistic.etherscan.io",
     ("op", "op mainnet", "op-mainnet")),
    (3, "arbitrum", "Arbitrum One", "42161", 1, 1, 1, "evm", "https://arbiscan.io",
     ("arb", "arbitrum one", "arbitrum-one")),
    (4, "noble", "Noble", None, 1, 0, 0, "noble", "https://www.mintscan.io/noble", ("noble-1",)),
    (5, "solana", "Solana", None, 1, 1, 1, "solana", "https://solscan.io", ("sol",)),
    (6, "base", "Base", "8453", 1, 1, 1, "evm", "https://basescan.org", ("base mainnet",)),
    (7, "polygon", "Polygon PoS", "137", 1, 1, 0, "evm", "https://polygonscan.com",
     ("matic", "polygon pos", "polygon-pos")),
    (8, "sui", "Sui", None, 1, 0, 0, "sui", "https://suiscan.xyz/mainnet", ()),
    (9, "aptos", "Aptos", None, 1, 0, 0, "aptos", "https://explorer.aptoslabs.com", ()),
    (10, "unichain", "Unichain", "130", 1, 1, 1, "evm", "https://uniscan.xyz", ()),
    (11, "linea", "Linea", "59144", 0, 1, 1, "evm", "https://lineascan.build", ()),
    (12, "codex", "Codex", "81224", 0, 1, 1, "evm", "https://explorer.codex.xyz", ()),
    (13, "sonic", "Sonic", "146", 0, 1, 0, "evm", "https://sonicscan.org", ()),
    (14, "world_chain", "World Chain", "480", 0, 1, 1, "evm", "https://worldscan.org",
     ("worldchain", "world chain", "world")),
    (15, "monad", "Monad", "143", 0, 1, 0, "evm", "https://monadscan.com", ()),
    (16, "sei", "Sei", "1329", 0, 1, 0, "evm", "https://seiscan.io", ("sei evm",)),
    (17, "bnb", "BNB Smart Chain", "56", 0, 1, 1, "evm", "https://bscscan.com",
     ("bsc", "bnb smart chain", "bnb chain", "binance smart chain")),
    (18, "xdc", "XDC Network", "50", 0, 1, 0, "evm", "https://xdcscan.com", ("xdc network",)),
    (19, "hyperevm", "HyperEVM", "999", 0, 1, 0, "evm", "https://hyperevmscan.io",
     ("hyperliquid", "hyper evm")),
    (21, "ink", "Ink", "57073", 0, 1, 1, "evm", "https://explorer.inkonchain.com", ()),
    (22, "plume", "Plume", "98866", 0, 1, 1, "evm", "https://explorer.plume.org", ()),
    (25, "starknet", "Starknet", None, 0, 1, 1, "starknet", "https://voyager.online", ()),
    (26, "arc", "Arc (testnet)", None, 0, 1, 0, "evm", "https://testnet.arcscan.app",
     ("arc testnet",)),
    (27, "stellar", "Stellar", None, 0, 1, 0, "stellar", "https://stellar.expert/explorer/public",
     ("xlm",)),
    # Fast Transfer sources after 27: EDGE and Morph are in Circle's Fast Transfer
    # table; Injective, Pharos and Cronos are not (their standard attestation is
    # already fast). Plasma (BFT finality) and X Layer: unconfirmed, set to no.
    # Explorers: Pharos's is the one its docs link; Injective's EVM explorer is unconfirmed.
    (28, "edge", "EDGE", "3343", 0, 1, 1, "evm", "https://pro.edgex.exchange/en-US/explorer",
     ("edgex",)),
    (29, "injective", "Injective", "1776", 0, 1, 0, "evm", "https://blockscout.injective.network",
     ("injective evm", "inj")),
    (30, "morph", "Morph", "2818", 0, 1, 1, "evm", "https://explorer.morph.network",
     ("morph l2", "morphl2")),
    (31, "pharos", "Pharos", "1672", 0, 1, 0, "evm", "https://pharos.socialscan.io",
     ("pharos pacific",)),
    (32, "cronos", "Cronos", "25", 0, 1, 0, "evm", "https://cronoscan.com",
     ("cronos evm", "cro")),
    (33, "plasma", "Plasma", "9745", 0, 1, 0, "evm", "https://plasmascan.to", ("xpl",)),
    (37, "x_layer", "X Layer", "196", 0, 1, 0, "evm", "https://www.oklink.com/xlayer",
     ("xlayer", "x layer", "okx x layer")),
)
# fmt: on

# Explorer paths by address format (EVM explorers share Etherscan's paths).
EXPLORER_PATHS: dict[str, tuple[str, str]] = {
    "evm": ("/address/{address}", "/tx/{tx}"),
    "noble": ("/address/{address}", "/tx/{tx}"),
    "solana": ("/account/{address}", "/tx/{tx}"),
    "sui": ("/account/{address}", "/tx/{tx}"),
    "aptos": ("/account/{address}?network=mainnet", "/txn/{tx}?network=mainnet"),
    "starknet": ("/contract/{address}", "/tx/{tx}"),
    "stellar": ("/contract/{address}", "/tx/{tx}"),
}

# (TokenMessenger, MessageTransmitter, TokenMinter); None where a chain has no such contract.
V1_CONTRACTS: dict[int, tuple[str | None, str | None, str | None]] = {
    0: ("0xbd3fa81b58ba92a82136038b25adec7066af3155", "0x0a992d191deec32afe36203ad87d7d289a738f81",
        "0xc4922d64a24675e16e1586e3e3aa56c06fabe907"),
    1: ("0x6b25532e1060ce10cc3b0a99e5683b91bfde6982", "0x8186359af5f57fbb40c6b14a588d2a59c0c29880",
        "0x420f5035fd5dc62a167e7e7f08b604335ae272b8"),
    2: ("0x2b4069517957735be00cee0fadae88a26365528f", "0x4d41f22c5a0e5c74090899e5a8fb597a8842b3e8",
        "0x33e76c5c31cb928dc6fe6487ab3b2c0769b1a1e3"),
    3: ("0x19330d10d9cc8751218eaf51e8885d058642e08a", "0xc30362313fbba5cf9163f0bb16a0e01f01a896ca",
        "0xe7ed1fa7f45d05c508232aa32649d89b73b8ba48"),
    6: ("0x1682ae6375c4e4a97e4b583bc394c861a46d8962", "0xad09780d193884d503182ad4588450c416d6f9d4",
        "0xe45b133ddc64be80252b0e9c75a8e74ef280eed6"),
    7: ("0x9daf8c91aefae50b9c0e69629d3f6ca40ca3b3fe", "0xf3be9355363857f3e001be68856a2f96b4c39ba9",
        "0x10f7835f827d6cf035115e10c50a853d7fb2d2ec"),
    10: ("0x4e744b28e787c3ad0e810ed65a24461d4ac5a762", "0x353be9e2e38ab1d19104534e4edc21c643df86f4",
         "0x726bfef3cbb3f8af7d8cb141e78f86ae43c34163"),
    # Noble: CCTP is a Cosmos SDK module; its module account
    # noble12l2w4ugfz4m6dd73yysz477jszqnfughxvkss5 is the TokenMessenger every
    # other domain registers for domain 4 (and the sender of Noble's burn messages).
    4: ("0x00000000000000000000000057d4eaf1091577a6b7d121202afbd2808134f117", None, None),
    # Solana V1 programs: TokenMessengerMinter (messenger and minter in one)
    # CCTPiPYPc6AsJuwueEnWgSgucamXDZwBd53dQ11YiKX3, MessageTransmitter
    # CCTPmbSD7gX1bxKPAmg77w8oFzNFpaQiQUWD43TKaecd.
    5: ("0xa65fc943419a5ad590042fd67c9791fd015acf53a54cc823edb8ff81b9ed722e",
        "0xa65fc989db5f5d42759f3a546058efcdcdc0bf3c1898072d8eb45dd1d80508ce",
        "0xa65fc943419a5ad590042fd67c9791fd015acf53a54cc823edb8ff81b9ed722e"),
    # Sui V1 packages: token_messenger_minter, message_transmitter.
    8: ("0x2aa6c5d56376c371f88a6cc42e852824994993cb9bab8d3e6450cbe3cb32b94e",
        "0x08d87d37ba49e785dde270a83f8e979605b03dc552b5548f26fdf2f49bf7ed1b",
        "0x2aa6c5d56376c371f88a6cc42e852824994993cb9bab8d3e6450cbe3cb32b94e"),
    # Aptos V1 packages: token_messenger_minter, message_transmitter.
    9: ("0x9bce6734f7b63e835108e3bd8c36743d4709fe435f44791918801d0989640a9d",
        "0x177e17751820e4b4371873ca8c30279be63bdea63b88ed0f2239c2eea10f1772",
        "0x9bce6734f7b63e835108e3bd8c36743d4709fe435f44791918801d0989640a9d"),
}
"""Mainnet CCTP V1 contracts. For Sui and Aptos the package addresses are
listed; whether a Sui or Aptos burn message names the package or a state
object as its header sender is unconfirmed."""

V2_COMMON: tuple[str, str, str] = (
    "0x28b5a0e9c621a5badaa536219b3a228c8168cf5d",  # TokenMessengerV2
    "0x81d40f21f12a8f0e3252bccb954d722d4c464b64",  # MessageTransmitterV2
    "0xfd78ee919681417d192449715b2594ab58f5d002",  # TokenMinterV2
)
"""The CREATE2 addresses of CCTP V2 on EVM chains (Circle, "Contract addresses")."""

V2_COMMON_UNCONFIRMED: frozenset[int] = frozenset({17, 29, 32, 33, 37})
"""EVM V2 domains given :data:`V2_COMMON` without Circle's table showing them:
BNB Smart Chain, Injective, Cronos, Plasma and X Layer (integrators' registries
and, for X Layer, an on-chain check by one integrator, agree; unconfirmed)."""

V2_NO_CONTRACTS: frozenset[int] = frozenset({26})
"""V2 domains whose mainnet contracts are unknown: Arc is listed as a testnet only."""

V2_CONTRACTS: dict[int, tuple[str | None, str | None, str | None]] = {
    # EDGE has its own deployment (Circle, "Contract addresses": domain 28).
    28: ("0x98706a006bc632df31cadfcbd43f38887ce2ca5c", "0x5b61381fc9e58e70efc13a4a97516997019198ee",
         "0x338dfd607855beec17f33e539ac2479853cc8384"),
    # Solana V2: TokenMessengerMinterV2 CCTPV2vPZJS2u2BBsUoscuikbYjnpFmbFsvVuJdgUMQe,
    # MessageTransmitterV2 CCTPV2Sm4AdWt5296sk4P66VBZ7bEhcARwFaaS9YPbeC.
    5: ("0xa65fc81d0fefa8860cb3b83f089b0224be8a6687b7ae49f594c0b9b4d7e93893",
        "0xa65fc81ce19edcd2d2c340b02fa61be1d5badde1592833ddf92009d8cf685455",
        "0xa65fc81d0fefa8860cb3b83f089b0224be8a6687b7ae49f594c0b9b4d7e93893"),
    # Starknet: TokenMessengerMinterV2 and MessageTransmitterV2 (Circle, "Starknet contracts").
    25: ("0x07d421b9ca8aa32df259965cda8acb93f7599f69209a41872ae84638b2a20f2a",
         "0x02ebb5777b6dd8b26ea11d68fdf1d2c85cd2099335328be845a28c77a8aef183",
         "0x07d421b9ca8aa32df259965cda8acb93f7599f69209a41872ae84638b2a20f2a"),
    # Stellar (Soroban): TokenMessengerMinter
    # CAE2G5Z77UP7GYPYGFOWFGW7C7J6I4YP2AFGSADRKQY62SYUFLPNFTXL, MessageTransmitter
    # CACMENFFJPJMSDAJQLX4R7K3SFZIW2LJSE3R2UMLGSWHFHS353FVXAZV (strkey payloads; from
    # integrators citing Circle's "Stellar contracts" page).
    27: ("0x09a3773ffd1ff361f8315d629adf17d3e4730fd00a6900715431ed4b142aded2",
         "0x04c234a54bd2c90c0982efc8fd5b91728b696991371d518b34ac729e5beecb5b",
         "0x09a3773ffd1ff361f8315d629adf17d3e4730fd00a6900715431ed4b142aded2"),
}
"""V2 contracts that are not :data:`V2_COMMON`: EDGE's own and the non-EVM programs."""

TOKENS: dict[int, dict[str, str]] = {
    0: {"USDC": "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48",
        "EURC": "0x1abaea1f7c830bd89acc67ec4af516284b1bc33c",
        "USYC": "0x136471a34f6ef19fe571effc1ca711fdb8e49f2b"},
    1: {"USDC": "0xb97ef9ef8734c71904d8002f8b6bc66dd9c48a6e",
        "EURC": "0xc891eb4cbdeff6e073e859e987815ed1505c2acd"},
    2: {"USDC": "0x0b2c639c533813f4aa9d7837caf62653d097ff85"},
    3: {"USDC": "0xaf88d065e77c8cc2239327c5edb3a432268e5831"},
    # Noble burns the denom uusdc; its burn messages carry keccak256("uusdc").
    4: {"USDC": "0x487039debedbf32d260137b0a6f66b90962bec777250910d253781de326a716d"},
    # Solana USDC mint EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v.
    5: {"USDC": "0xc6fa7af3bedbad3a3d65f36aabc97431b1bbe4c2d2f6e0e47ca60203452f5d61"},
    6: {"USDC": "0x833589fcd6edb6e08f4c7c32d4f71b54bda02913",
        "EURC": "0x60a3e35cc302bfa44cb288bc5a4f316fdb1adb42"},
    7: {"USDC": "0x3c499c542cef5e3811e1192ce70d8cc03d5c3359"},
    # Sui: the package of the coin type 0xdba3...::usdc::USDC.
    8: {"USDC": "0xdba34672e30cb065b1f93e3ab55318768fd6fef66c15942c9f7cb846e2f900e7"},
    # Aptos: the USDC fungible-asset metadata object.
    9: {"USDC": "0xbae207659db88bea0cbead6da0ed00aac12edcdda169e591cd41c94180b46f3b"},
    10: {"USDC": "0x078d782b760474a361dda0af3839290b0ef57ad6"},
    11: {"USDC": "0x176211869ca2b568f2a7d4ee941e073a821ee1ff"},
    12: {"USDC": "0xd996633a415985dbd7d6d12f4a4343e31f5037cf"},
    13: {"USDC": "0x29219dd400f2bf60e5a23d13be72b486d4038894"},
    14: {"USDC": "0x79a02482a880bce3f13e09da970dc34db4cd24d1"},
    15: {"USDC": "0x754704bc059f8c67012fed69bc8a327a5aafb603"},
    16: {"USDC": "0xe15fc38f6d8c56af07bbcbe3baf5708a2bf42392"},
    # BNB Smart Chain: CCTP moves USYC only (Circle, "Supported blockchains").
    17: {"USYC": "0x8d0fa28f221eb5735bc71d3a0da67ee5bc821311"},
    18: {"USDC": "0xfa2958cb79b0491cc627c1557f441ef849ca8eb1"},
    19: {"USDC": "0xb88339cb7199b77e23db6e890353e22632ba630f"},
    21: {"USDC": "0x2d270e6886d130d724215a266106e6832161eaed"},
    22: {"USDC": "0x222365ef19f7947e5484218551b56bb3965aa7af"},
    28: {"USDC": "0x98d2919b9a214e6fa5384ac81e6864ba686ad74c"},
    29: {"USDC": "0xa00c59ff5a080d2b954d0c75e46e22a0c371235a"},
    30: {"USDC": "0xcfb1186f4e93d60e60a8bdd997427d1f33bc372b"},
    31: {"USDC": "0xc879c018db60520f4355c26ed1a6d572cdac1815"},
    32: {"USDC": "0x3d7f2c478aafdb65542bcb44bceec05849999d2d"},
    33: {"USDC": "0x2d661c89d812261039af9764eceaaee884f5f67f"},
    37: {"USDC": "0xb6ceceab302e2e4948951ee7843fc24e92933061"},
}
"""Tokens burned through CCTP, by domain. USYC is listed on Ethereum, the other
end of BNB Smart Chain's USYC route. EURC is listed where Circle issues it
natively and pre-registers it for "CCTP for non-USDC" (Ethereum, Avalanche,
Base): that layer moves it through its own CrossChainTokenService over the
MessageTransmitterV2, not through the TokenMessenger. Starknet's and
Stellar's USDC are not listed (unconfirmed)."""
