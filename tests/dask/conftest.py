"""The dask tests run on dask's synchronous scheduler unless a test picks another: the suite
shares two cores, and tiny arrays gain nothing from threads."""

from __future__ import annotations

import pytest

dask = pytest.importorskip("dask")


@pytest.fixture(autouse=True)
def _synchronous_scheduler():
    with dask.config.set(scheduler="synchronous"):
        yield
