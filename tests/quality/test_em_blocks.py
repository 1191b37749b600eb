"""EM over blocks of items: one pass against its definition evaluated cell by cell, and the
split into blocks against one block."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import sparse
from scipy.special import entr, logsumexp, softmax

from annokit.quality.em_blocks import Block, block_pass, start_sums, whole_block


def _problem(seed: int, n_items: int = 3000, n_cols: int = 60, n_labels: int = 4):
    rng = np.random.default_rng(seed)
    rows = np.repeat(np.arange(n_items), 5)
    x = sparse.csr_matrix((np.ones(rows.size), (rows, rng.integers(0, n_cols, rows.size))),
                          shape=(n_items, n_cols))
    table = np.log(rng.dirichlet(np.ones(n_labels) * 0.3, size=n_cols))  # peaked and flat
    log_priors = np.log(rng.dirichlet(np.ones(n_labels)))
    post = rng.dirichlet(np.ones(n_labels), size=n_items)
    return x, table, log_priors, post


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("clamped", [False, True])
def test_one_pass_equals_its_definition_cell_by_cell(seed, clamped):
    """Expected log joint, log-likelihood, next posteriors, their entropy (from the softmax's
    normaliser, or cell by cell when rows are clamped) and sums, against scipy's softmax,
    logsumexp and entr."""
    x, table, log_priors, post = _problem(seed)
    gold = np.full(x.shape[0], -1)
    if clamped:
        gold[::7] = 1
    block = whole_block(x, gold)
    out = np.empty_like(post)
    sums = block_pass(block, table, log_priors, post, out)
    joint = x @ table + log_priors
    want = softmax(joint, axis=1)
    want[gold >= 0] = np.eye(post.shape[1])[gold[gold >= 0]]
    np.testing.assert_allclose(out, want, rtol=1e-12, atol=1e-300)
    assert sums.expected == pytest.approx(float((post * joint).sum()), rel=1e-12)
    assert sums.log_likelihood == pytest.approx(float(logsumexp(joint, axis=1).sum()), rel=1e-12)
    assert sums.entropy == pytest.approx(float(entr(want).sum()), rel=1e-9)
    np.testing.assert_allclose(sums.mass, x.T @ want, rtol=1e-12)
    np.testing.assert_allclose(sums.post_sum, want.sum(axis=0), rtol=1e-12)


def test_an_infinite_log_joint_takes_the_cell_by_cell_terms():
    """smoothing=0: log 0 = -inf in the table; q log q and q J are 0 where q is 0."""
    x, table, log_priors, post = _problem(3, n_labels=3)
    table[:, 2] = -np.inf
    post[:, 2] = 0.0
    block = whole_block(x, np.full(x.shape[0], -1))
    out = np.empty_like(post)
    sums = block_pass(block, table, log_priors, post, out)
    joint = x @ table + log_priors
    finite = np.isfinite(joint)
    assert sums.expected == pytest.approx(float((post[finite] * joint[finite]).sum()), rel=1e-12)
    assert (out[:, 2] == 0).all()
    assert sums.entropy == pytest.approx(float(entr(out).sum()), rel=1e-12)


def test_two_blocks_add_up_to_one():
    """Sums of two blocks of items (as partitions pass them) equal one block's (to rounding)."""
    x, table, log_priors, post = _problem(4, n_items=20_000)
    gold = np.full(x.shape[0], -1)
    whole = whole_block(x, gold)
    halves = [Block(rows, x[rows], x[rows].T, gold[rows])
              for rows in (slice(0, 9_000), slice(9_000, 20_000))]
    outs = [np.empty_like(post), np.empty_like(post)]
    one = block_pass(whole, table, log_priors, post, outs[0])
    parts = [block_pass(b, table, log_priors, post[b.rows], outs[1][b.rows]) for b in halves]
    two = parts[0] + parts[1]
    np.testing.assert_array_equal(outs[0], outs[1])
    for name in ("expected", "entropy", "log_likelihood"):
        assert getattr(two, name) == pytest.approx(getattr(one, name), rel=1e-12)
    np.testing.assert_allclose(two.mass, one.mass, rtol=1e-12)
    np.testing.assert_allclose(two.post_sum, one.post_sum, rtol=1e-12)
    start = start_sums(whole, post)
    np.testing.assert_allclose(start.mass, x.T @ post, rtol=1e-12)
    assert start.entropy == pytest.approx(float(entr(post).sum()), rel=1e-12)
