"""Per-item results written partitioned from the workers, swapped in atomically.

Each partition is written by the worker that holds it, as ``part.<i>.parquet`` in a
new directory beside the target (a local or shared file system both workers and client
see); the directory replaces the target in one step when every partition is written
(:func:`annokit.io.atomic.atomic_directory`), so a failed run leaves the old results.
Nothing is collected on the client.
"""

from __future__ import annotations

import os
from typing import Any

import pandas as pd

from annokit.io.atomic import atomic_directory
from annokit.scale.progress import compute

__all__ = ["write_partitioned"]


def _write_part(df: pd.DataFrame, folder: str, part: int) -> int:
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.Table.from_pandas(df, preserve_index=False),
                   os.path.join(folder, f"part.{part:05d}.parquet"))
    return len(df)


def write_partitioned(frame: Any, out: str | os.PathLike, *, client: Any = None) -> int:
    """Write a dask DataFrame to the directory ``out`` (one Parquet file per partition).

    Returns the number of rows written.

    Examples
    --------
    >>> import dask, dask.dataframe as dd, pandas as pd, tempfile, pathlib
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "labels"
    >>> ddf = dd.from_pandas(pd.DataFrame({"item": ["a", "b", "c"]}), npartitions=2)
    >>> with dask.config.set(scheduler="synchronous"):
    ...     write_partitioned(ddf, out)
    3
    >>> sorted(p.name for p in out.iterdir())
    ['part.00000.parquet', 'part.00001.parquet']
    """
    import dask

    with atomic_directory(out) as tmp:
        tasks = [dask.delayed(_write_part)(p, str(tmp), i)
                 for i, p in enumerate(frame.to_delayed())]
        sizes = compute(client, tasks, desc=f"writing {os.path.basename(os.fspath(out))}")
    return int(sum(sizes))
