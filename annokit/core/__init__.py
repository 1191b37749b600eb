"""The ground floor: the vote model, label coding, input checks and the shared mathematics.

Nothing here imports from another annokit package: :mod:`~annokit.core.votes`
(the vote model), :mod:`~annokit.core.labels` (label sets and coding),
:mod:`~annokit.core.frames` (pandas frames to codes), :mod:`~annokit.core.checks`
(parameter and array checks), :mod:`~annokit.core.divergence` (distances
between distributions), :mod:`~annokit.core.soft_labels` (counts to
distributions, entropy, majority).
"""
