"""annokit: datasets with many annotators per item.

Load per-annotator votes, build soft labels, find spammers, evaluate models
against the distribution of human judgements, and decide how many
annotations are enough.
"""

from annokit.errors import AnnokitError, DataFormatError, VoteSchemaError
from annokit.votes import CHAOSNLI_NLI_LABELS, LabelSet, Votes

__version__ = "0.1.0"

__all__ = [
    "AnnokitError",
    "DataFormatError",
    "VoteSchemaError",
    "LabelSet",
    "Votes",
    "CHAOSNLI_NLI_LABELS",
    "__version__",
]
