"""A ledger dataset analysed on a local Dask cluster of two worker processes.

The ledger analyses a report draws on (latency by route, fees and the fast
share of V2, relayers, integrators, the rebalancing share) run as tasks on
the cluster's workers over the partitioned files, and give the numbers of
pandas on the same dataset read whole.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import cctx_research as cctx
from cctx_research.analysis import actors, latency, movements, v2
from cctx_research.ingest import datasets

ANALYSES = {
    "latency.by_route": lambda t: latency.by_route(t),
    "v2.fast_share": lambda t: v2.fast_share(t),
    "v2.fees": lambda t: v2.fees(t),
    "actors.relayers": lambda t: actors.relayers(t, by="route"),
    "actors.integrators": lambda t: actors.integrators(t),
    "movements.rebalancing_share": lambda t: movements.rebalancing_share(t, window="6h"),
}


def _same(got: pd.DataFrame, want: pd.DataFrame, name: str) -> None:
    assert list(got.columns) == list(want.columns), name
    assert len(got) == len(want), name
    for col in want.columns:
        if pd.api.types.is_float_dtype(want[col]):
            np.testing.assert_allclose(
                got[col].to_numpy(float), want[col].to_numpy(float), rtol=1e-9, err_msg=name
            )
        else:
            assert got[col].astype(str).tolist() == want[col].astype(str).tolist(), (name, col)


def test_ledger_analyses_on_a_two_worker_cluster(tmp_path):
    pytest.importorskip("dask.dataframe")
    distributed = pytest.importorskip("dask.distributed")
    root = tmp_path / "ledger"
    datasets.write(cctx.load_sample(as_of="2026-11-20", days=3), root)
    whole = datasets.read(root)
    assert len(whole) > 1_000
    assert whole["source_domain"].nunique() > 3
    with (
        distributed.LocalCluster(
            n_workers=2,
            processes=True,
            threads_per_worker=1,
            memory_limit="1GiB",
            dashboard_address=":0",
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        lazy = datasets.scan(root, engine="dask")
        assert lazy.npartitions > 1  # a partition a day: the work can spread
        with distributed.get_task_stream(client) as stream:
            for name, analysis in ANALYSES.items():
                _same(analysis(lazy), analysis(whole), name)
        workers = set(client.scheduler_info()["workers"])
        assert len(workers) == 2
        # the reads and reductions ran as tasks on the two worker processes
        ran_on = {task["worker"] for task in stream.data}
        assert ran_on
        assert ran_on <= workers
