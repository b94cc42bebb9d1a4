"""Every public function, given a wrong type or value, raises a clear error naming the argument.

For each public function a valid call is built; then each of its
parameters in turn gets wrong values (a wrong type, an out-of-range number,
an unknown option, a frame without the expected columns). The call must
raise ``ValueError``, ``TypeError`` or a :class:`~cctx_research.errors.CctxError`
whose message names the parameter (or, for a data argument, says what data
it needs) and never an obscure error from pandas or numpy (``KeyError``,
``AttributeError``, ``IndexError``, ...).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import matplotlib
import pandas as pd
import pytest

matplotlib.use("Agg")

import matplotlib.pyplot as plt
from analysis.frames import random_transfers

import cctx_research as cctx
from cctx_research import chains, plots, report, schema
from cctx_research.analysis import addresses, flows, latency, linking, pending, v2, volumes
from cctx_research.analysis import history as ledger_history
from cctx_research.errors import CctxError
from cctx_research.iris.frames import empty_messages
from cctx_research.service.sample import generate

ALLOWED = (ValueError, TypeError, CctxError)


class Wrong:
    """An object of no type any public function accepts."""

    def __repr__(self) -> str:
        return "<Wrong>"


NOT_A_FRAME = pd.DataFrame({"unrelated": [1, 2]})


def _transfers() -> pd.DataFrame:
    return random_transfers(300, seed=3, days=10)


T = _transfers()
ADDRESS = str(T["mint_recipient"].iloc[0])
HISTORY = pd.DataFrame()  # filled lazily from the sample client
L = generate("2024-07-01", days=1)  # a ledger: both sides of each transfer


# name -> (function, valid positional args, valid keyword args, {parameter: [wrong values]})
def cases(client: Any) -> dict[str, tuple[Callable[..., Any], tuple, dict, dict[str, list]]]:
    g = flows.graph(T)
    history = client.volume_history("2024-06-29", "2024-07-01", freq="12h")
    frame_wrongs = [Wrong(), NOT_A_FRAME, 42]
    option = ["no-such-option", Wrong()]
    count = [-3, "3", Wrong()]
    when = ["not a date", Wrong()]
    title = [Wrong()]
    ax = [Wrong()]
    return {
        "chains.address_format": (
            chains.address_format,
            ("solana",),
            {},
            {"value": [Wrong(), -1, "nowhere"]},
        ),
        "chains.by_chain_id": (chains.by_chain_id, ("8453",), {}, {"value": [Wrong(), 1.5]}),
        "chains.contracts": (
            chains.contracts,
            (6, 2),
            {},
            {"domain_id": [Wrong(), "nowhere"], "version": [Wrong(), 3]},
        ),
        "chains.token_messengers": (
            chains.token_messengers, (6,), {}, {"domain_id": [Wrong(), "nowhere"]}
        ),
        "chains.contract_domains": (
            chains.contract_domains, ("0x" + "ab" * 20,), {}, {"address": [Wrong(), "not hex"]}
        ),
        "chains.tokens": (chains.tokens, (6,), {}, {"domain_id": [Wrong(), "nowhere"]}),
        "chains.token_symbol": (
            chains.token_symbol,
            (6, "0x" + "ab" * 20),
            {},
            {"domain_id": [Wrong(), "nowhere"], "address": [Wrong(), "0x12"]},
        ),
        "chains.register": (chains.register, ({"domain": 6},), {}, {"chain": [Wrong(), "base"]}),
        "schema.optional_columns": (schema.optional_columns, ("ledger",), {}, {"kind": option}),
        "linking.quality": (
            linking.quality,
            (L,),
            {},
            {"ledger": frame_wrongs, "freq": ["fortnightly", Wrong()]},
        ),
        "chains.info": (chains.info, ("base",), {}, {"value": [Wrong(), -1, "nowhere"]}),
        "chains.chain_id": (chains.chain_id, (6,), {}, {"domain_id": [Wrong(), -1, "nowhere"]}),
        "chains.chain_label": (chains.chain_label, (6,), {}, {"domain_id": [Wrong(), "nowhere"]}),
        "chains.chain_name": (chains.chain_name, (6,), {}, {"domain_id": [Wrong(), "nowhere"]}),
        "chains.domain": (chains.domain, ("base",), {}, {"value": [Wrong(), "nowhere", 2.5]}),
        "chains.domain_from_chain_id": (
            chains.domain_from_chain_id,
            ("8453",),
            {},
            {"value": [Wrong(), 1.5]},
        ),
        "chains.domains": (chains.domains, (["base", 0],), {}, {"values": [Wrong(), ["nowhere"]]}),
        "chains.in_order": (chains.in_order, (["base"],), {}, {"names": [Wrong(), "base"]}),
        "chains.sort_key": (chains.sort_key, ("base",), {}, {"name": [Wrong(), 6]}),
        "chains.name_from_chain_id": (
            chains.name_from_chain_id,
            ("8453",),
            {},
            {"value": [Wrong(), 1.5]},
        ),
        "schema.chain_categorical": (
            schema.chain_categorical,
            (["base"],),
            {},
            {"values": [Wrong()]},
        ),
        "schema.columns": (schema.columns, ("transfers",), {}, {"kind": option}),
        "schema.dtypes": (schema.dtypes, ("transfers",), {}, {"kind": option}),
        "schema.empty": (schema.empty, ("transfers",), {}, {"kind": option}),
        "schema.complete": (schema.complete, (T, "ledger"), {}, {"kind": option}),
        "schema.provenance": (schema.provenance, (T,), {}, {"frame": [Wrong(), 42]}),
        "schema.validate": (
            schema.validate,
            (T, "transfers"),
            {},
            {"frame": frame_wrongs, "kind": option},
        ),
        "flows.graph": (flows.graph, (T,), {}, {"transfers": frame_wrongs, "weight": option}),
        "flows.matrix": (flows.matrix, (T,), {}, {"transfers": frame_wrongs, "values": option}),
        "flows.net": (flows.net, (T,), {}, {"transfers": frame_wrongs, "freq": option}),
        "flows.corridors": (flows.corridors, (T,), {}, {"transfers": frame_wrongs, "n": count}),
        # any edge attribute may serve as the weight: only a wrong type is wrong
        "flows.centrality": (
            flows.centrality,
            (g,),
            {},
            {"graph": frame_wrongs, "weight": [Wrong(), 3]},
        ),
        "volumes.timeseries": (
            volumes.timeseries,
            (T,),
            {},
            {"transfers": frame_wrongs, "freq": option, "by": option},
        ),
        "volumes.size_buckets": (volumes.size_buckets, (T,), {}, {"transfers": frame_wrongs}),
        "volumes.seasonality": (volumes.seasonality, (T,), {}, {"transfers": frame_wrongs}),
        "volumes.kpis": (volumes.kpis, (T,), {}, {"transfers": frame_wrongs, "now": when}),
        "volumes.in_flight": (volumes.in_flight, (history,), {}, {"volume_history": frame_wrongs}),
        "addresses.top": (
            addresses.top,
            (T,),
            {},
            {"transfers": frame_wrongs, "role": option, "by": option, "n": count},
        ),
        "addresses.concentration": (
            addresses.concentration,
            (T["amount"],),
            {},
            {"values": [Wrong(), "text"]},
        ),
        "addresses.counterparty_graph": (
            addresses.counterparty_graph,
            (T,),
            {},
            {"transfers": frame_wrongs, "min_volume": [-1, "big", Wrong()]},
        ),
        "addresses.hubs": (
            addresses.hubs,
            (addresses.counterparty_graph(T),),
            {},
            {"graph": frame_wrongs, "n": count},
        ),
        "addresses.profile": (
            addresses.profile,
            (ADDRESS, T),
            {},
            {"address": [Wrong(), "0xnothex"], "transfers": [Wrong(), NOT_A_FRAME], "freq": option},
        ),
        "latency.by_route": (
            latency.by_route,
            (L,),
            {},
            {"ledger": [*frame_wrongs, T], "by": [*option, "route", 3]},
        ),
        "latency.by_relayer": (
            latency.by_relayer,
            (L,),
            {},
            {"ledger": [*frame_wrongs, T], "by": [*option, "relayer", 3]},
        ),
        "latency.timeseries": (
            latency.timeseries,
            (L,),
            {},
            {"ledger": [*frame_wrongs, T], "freq": option, "by": option},
        ),
        "pending.stuck": (
            pending.stuck,
            (L,),
            {},
            {"ledger": [*frame_wrongs, T], "as_of": when, "factor": [0, -1.5, "3", Wrong()]},
        ),
        "pending.in_flight": (
            pending.in_flight,
            (L,),
            {},
            {"ledger": [*frame_wrongs, T], "as_of": when, "by": option},
        ),
        "pending.timeseries": (
            pending.timeseries,
            (L,),
            {},
            {
                "ledger": [*frame_wrongs, T],
                "freq": [*option, "MS", "-1h", 3],
                "factor": [0, -1.5, "3", Wrong()],
                "as_of": when,
            },
        ),
        "pending.waiting": (
            pending.waiting,
            (L, empty_messages()),
            {},
            {
                "ledger": [*frame_wrongs, T],
                "attestations": [Wrong(), "iris/messages.parquet", pd.DataFrame({"x": [1]})],
                "as_of": when,
            },
        ),
        "v2.fast_share": (v2.fast_share, (L,), {}, {"ledger": [*frame_wrongs, T]}),
        "history.volume_history": (
            ledger_history.volume_history,
            (L, "2024-06-30", "2024-07-01"),
            {},
            {"ledger": [*frame_wrongs, T], "start": when, "freq": [*option, "-1D", 3]},
        ),
        "v2.fees": (v2.fees, (L,), {}, {"ledger": [*frame_wrongs, T], "by": option}),
        "v2.fee_caps": (v2.fee_caps, (L,), {}, {"ledger": [*frame_wrongs, T], "by": option}),
        "v2.hooks": (v2.hooks, (L,), {}, {"ledger": [*frame_wrongs, T]}),
        "plots.plot_latency": (
            plots.plot_latency,
            (L,),
            {},
            {
                "data": [*frame_wrongs, T],
                "ax": ax,
                "by": option,
                "reference": [Wrong(), {"base": 1}, {"ethereum->base": "soon"}],
                "log": ["yes"],
                "top": count,
                "title": title,
            },
        ),
        "plots.plot_stuck": (
            plots.plot_stuck,
            (L,),
            {},
            {"data": [*frame_wrongs, T], "ax": ax, "factor": [0, "3"], "title": title},
        ),
        "plots.plot_relayer_shares": (
            plots.plot_relayer_shares,
            (L,),
            {},
            {"data": [*frame_wrongs, T], "ax": ax, "freq": option, "top": count,
             "value": option, "title": title},
        ),
        "plots.plot_fast_share": (
            plots.plot_fast_share,
            (L,),
            {},
            {"data": [*frame_wrongs, T], "ax": ax, "value": option, "title": title},
        ),
        "plots.plot_flow_graph": (
            plots.plot_flow_graph,
            (g,),
            {},
            {"data": frame_wrongs, "ax": ax, "weight": option, "title": title},
        ),
        "plots.plot_flow_matrix": (
            plots.plot_flow_matrix,
            (flows.matrix(T),),
            {},
            # any square frame is a matrix: only a non-frame is wrong
            {"data": [Wrong(), 42], "ax": ax, "values": option, "title": title},
        ),
        "plots.plot_net_flows": (
            plots.plot_net_flows,
            (flows.net(T),),
            {},
            {"data": frame_wrongs, "ax": ax},
        ),
        "plots.plot_volume": (
            plots.plot_volume,
            (volumes.timeseries(T),),
            {},
            {"data": frame_wrongs, "ax": ax, "value": option, "kind": option, "top": count},
        ),
        "plots.plot_size_distribution": (
            plots.plot_size_distribution,
            (T,),
            {},
            {"data": frame_wrongs, "ax": ax, "bins": count, "weights": option},
        ),
        "plots.plot_seasonality": (
            plots.plot_seasonality,
            (volumes.seasonality(T),),
            {},
            {"data": frame_wrongs, "ax": ax, "values": option, "cmap": option},
        ),
        "plots.plot_lorenz": (
            plots.plot_lorenz,
            (T,),
            {},
            {"data": frame_wrongs, "ax": ax, "role": option},
        ),
        "plots.plot_address_activity": (
            plots.plot_address_activity,
            (addresses.profile(ADDRESS, T),),
            {},
            {"data": frame_wrongs, "ax": ax, "value": option},
        ),
        "plots.plot_in_flight": (
            plots.plot_in_flight,
            (volumes.in_flight(history),),
            {},
            {"data": frame_wrongs, "ax": ax},
        ),
        "report.default_window": (
            report.default_window,
            (),
            {},
            {"start": when, "end": when, "days": count},
        ),
        "report.html_table": (
            report.html_table,
            (T.head(),),
            {},
            {"frame": [Wrong(), 42], "caption": [Wrong()]},
        ),
        "report.render_png": (
            report.render_png,
            (plots.plot_lorenz, T),
            {},
            {"draw": [Wrong(), 42], "dpi": count, "figsize": [Wrong(), (1,)]},
        ),
        "report.build": (
            report.build,
            (client, "2024-06-30", "2024-07-01"),
            {},
            {
                "client": [Wrong(), 42],
                "start": when,
                "chains": [["nowhere"], Wrong()],
                "top_n": count,
                "title": title,
                "ledger": [Wrong(), "ledger.parquet", T.head()],
                "transfers": [T],
            },
        ),
        "report.output_path": (
            report.output_path,
            ("report.html",),
            {},
            {"path": [Wrong(), 42, "report.pdf", "no/such/dir/report.html"]},
        ),
        "report.build from frames": (
            report.build,
            (None, "2024-06-30", "2024-07-01"),
            {"ledger": L},
            {"transfers": [Wrong(), 42], "volume_history": [Wrong(), 42]},
        ),
        "connect": (cctx.connect, (), {"sample": True}, {"sample": ["yes", Wrong()]}),
        "Client.mints": (
            client.mints,
            ("2024-06-30", "2024-07-01"),
            {},
            {
                "start": when,
                "end": when,
                "source": [["nowhere"], Wrong()],
                "destination": [["nowhere"], Wrong()],
            },
        ),
        "Client.received": (
            client.received,
            (ADDRESS, "2024-06-30", "2024-07-01"),
            {},
            {"address": [Wrong(), "0x12"], "start": when},
        ),
        "Client.transaction": (
            client.transaction,
            ("0x" + "ab" * 32,),
            {},
            {"tx_hash": [Wrong(), "0x12"]},
        ),
        "Client.volume": (client.volume, ("2024-06-30", "2024-07-01"), {}, {"start": when}),
        "Client.volume_history": (
            client.volume_history,
            ("2024-06-30", "2024-07-01"),
            {},
            {"start": when, "freq": ["-1h", Wrong(), "0s"]},
        ),
        "Client.top_senders": (
            client.top_senders,
            ("2024-06-30", "2024-07-01"),
            {},
            {"start": when, "limit": count},
        ),
        "Client.clear_cache": (client.clear_cache, (), {}, {"older_than": [Wrong(), "-1D"]}),
    }


def _names_it(message: str, parameter: str, value: Any) -> bool:
    """The message names the parameter, or says what to pass instead."""
    if parameter in message:
        return True
    # "plot_volume expects volumes.timeseries(...) output", "unknown chain 'x'; pass ...",
    # "a chain must be a domain id ...": what to pass, in the library's words
    return any(
        w in message
        for w in (
            "expects",
            "expected a pandas DataFrame",
            "missing columns",
            "; pass ",
            "chain must be",
            "chains must be",
            "chain id must be",
            "domain ids are",
            "values must be",
        )
    )


def _bind(fn: Callable[..., Any], args: tuple, kwargs: dict, parameter: str, value: Any):
    sig = inspect.signature(fn)
    bound = sig.bind_partial(*args, **kwargs)
    bound.arguments[parameter] = value
    return bound.args, bound.kwargs


def _all_cases(client: Any):
    for name, (fn, args, kwargs, wrongs) in cases(client).items():
        for parameter, values in wrongs.items():
            assert parameter in inspect.signature(fn).parameters, (name, parameter)
            for value in values:
                yield name, fn, args, kwargs, parameter, value


def test_every_public_module_is_covered(sample_client) -> None:
    covered = set(cases(sample_client))
    modules = {
        "chains": chains,
        "schema": schema,
        "flows": flows,
        "volumes": volumes,
        "addresses": addresses,
        "latency": latency,
        "linking": linking,
        "pending": pending,
        "v2": v2,
        "history": ledger_history,
        "plots": plots,
        "report": report,
    }
    missing = []
    for prefix, module in modules.items():
        for name in module.__all__:
            obj = getattr(module, name)
            public = inspect.isfunction(obj) and inspect.signature(obj).parameters
            if public and f"{prefix}.{name}" not in covered and name != "is_synthetic":
                missing.append(f"{prefix}.{name}")
    assert missing == []


def test_wrong_arguments_raise_clear_errors(sample_client) -> None:
    problems = []
    checked = 0
    for name, fn, args, kwargs, parameter, value in _all_cases(sample_client):
        call_args, call_kwargs = _bind(fn, args, kwargs, parameter, value)
        try:
            fn(*call_args, **call_kwargs)
        except ALLOWED as exc:
            message = str(exc)
            if not message.strip() or not _names_it(message, parameter, value):
                problems.append(f"{name}({parameter}={value!r}): unclear message {message!r}")
        except Exception as exc:  # an obscure error: what this test exists to catch
            problems.append(f"{name}({parameter}={value!r}): {type(exc).__name__}: {exc}")
        else:
            problems.append(f"{name}({parameter}={value!r}): accepted")
        finally:
            plt.close("all")
        checked += 1
    assert checked > 150
    assert problems == [], "\n".join(problems)


@pytest.mark.parametrize(
    "options",
    [
        {"page_size": 0},
        {"page_size": "100"},
        {"max_workers": 0},
        {"timeout": -1},
        {"timeout": float("nan")},
        {"retries": -1},
        {"cache": "yes"},
        {"cache_dir": 42},
        {"expire_after": "soon"},
        {"settle_after": -5},
        {"chunk": "0s"},
        {"decimals": 99},
        {"backoff": -1},
        {"clock": 42},
        {"progress": "on"},
        {"offline": True, "cache": False},
    ],
    ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()),
)
def test_client_options(options: dict[str, Any], tmp_path) -> None:
    with pytest.raises(ALLOWED) as info:
        cctx.Client("http://127.0.0.1:1", "p1", "k", cache_dir=tmp_path, **options)
    assert next(iter(options)) in str(info.value)


@pytest.mark.parametrize(
    ("args", "name"),
    [
        ((42, "p1", "k"), "base_url"),
        (("ftp://x", "p1", "k"), "base_url"),
        (("http://127.0.0.1:1", "a/b", "k"), "project_id"),
        (("http://127.0.0.1:1", 7, "k"), "project_id"),
        (("http://127.0.0.1:1", "p1", 7), "key"),
        (("http://127.0.0.1:1", "p1", " "), "api_key"),
    ],
)
def test_client_required_arguments(args: tuple, name: str, tmp_path) -> None:
    with pytest.raises(ALLOWED) as info:
        cctx.Client(*args, cache_dir=tmp_path)
    assert name in str(info.value)
