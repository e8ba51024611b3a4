"""The Dask cluster warchive starts on this machine (``--scheduler local[:N]``, ``index(client=None)``,
the bench): N worker processes of one thread each.

Dask's statistical profiler is off in its workers: it samples each worker's threads every 10 ms
for the dashboard's profile page, about 15% of a worker's event loop, and where every core runs
a worker (the point of a local cluster) that time is taken from the indexing (2 workers on 2
cores: 1.43-1.54x one worker with it, 1.44-1.65x without; bench/results/dask-2026-12-07.txt).
A cluster the user starts keeps the user's settings.
"""

from __future__ import annotations

from distributed import LocalCluster

__all__ = ["local_cluster"]


def local_cluster(workers: int) -> LocalCluster:
    """A LocalCluster of ``workers`` processes, one thread each, the profiler off, the dashboard
    on a free port."""
    # (the nannies' own configuration, which they set in each worker process they start, again
    # after one died too; set over the rest, so a dotted name does)
    return LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=":0",
                        config={"distributed.worker.profile.enabled": False})
