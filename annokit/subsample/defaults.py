"""The one set of defaults behind "how many annotations are enough".

:func:`~annokit.subsample.subsampling_curve`, :func:`~annokit.subsample.recommend_k`,
:func:`~annokit.subsample.how_many`, ``annokit subsample`` and ``annokit report
--subsample`` all read their defaults from here, so the same question asked of
two of them gets the same answer. (Plain Python: the command line reads it
without importing numpy or pandas.)
"""

from __future__ import annotations

from typing import Final, Literal

__all__ = ["AGREEMENT_BINS", "EPSILON", "INTERVAL", "REPS", "SHORT", "TARGET", "TARGETS",
           "default_ks"]

#: What a recommended k is measured against: ``"population"``, the per-item
#: distributions of a Dirichlet-multinomial fitted to the votes (infinitely many
#: annotators; k may exceed the votes collected), or ``"pool"``, the collected votes
#: themselves (the observed curve up to half the fewest votes on an item). The
#: population is the default: "how many annotators does the next data set need"
#: does not depend on how many votes this one happened to collect, while the pool's
#: answer is capped by (and shrinks with) the size of the pool.
TARGET = "population"
#: The targets :func:`~annokit.subsample.recommend_k` accepts.
TARGETS = ("pool", "population")
#: Tolerance: the largest expected total variation distance (TVD) to the target.
EPSILON = 0.05
#: Coverage of the percentile intervals over repetitions (curves and recommended k).
INTERVAL = 0.95
#: Repetitions of the subsampling curve.
REPS = 200
#: Agreement bins of a curve's ``by_bin`` (the value of
#: :data:`annokit.core.soft_labels.AGREEMENT_BINS`, evaluate's and the report's default;
#: written here too so the command line reads it without importing numpy: a test compares them).
AGREEMENT_BINS = 5
#: Items with fewer than k votes: counted, warned about and left out at that k.
SHORT: Final[Literal["skip"]] = "skip"


def default_ks(n_max: int) -> list[int]:
    """The default k grid: 1, 2, 5, 10, 20, 50, ... up to ``n_max``, and ``n_max`` itself.

    Parameters
    ----------
    n_max : int
        The most votes on an item.

    Examples
    --------
    >>> default_ks(10), default_ks(100), default_ks(7)
    ([1, 2, 5, 10], [1, 2, 5, 10, 20, 50, 100], [1, 2, 5, 7])
    """
    n_max = max(int(n_max), 1)
    ks = [m * 10 ** e for e in range(len(str(n_max))) for m in (1, 2, 5)]
    return sorted({k for k in ks if k <= n_max} | {n_max})
