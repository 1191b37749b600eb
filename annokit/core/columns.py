"""Column roles of vote tables: which column holds the item, the annotator, the label, the gold.

The one vocabulary of column names (:data:`ROLE_SPELLINGS`) and the one detector
(:func:`detect_columns`), used by every reader of tables: files (:mod:`annokit.io.tabular`,
the Dask reader), pandas frames (:meth:`annokit.core.votes.Votes.from_long`,
:func:`annokit.io.read_votes` on a DataFrame) and ratings tables. It lives in ``core`` so the
vote model can detect columns without importing a reader.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from annokit.errors import InvalidValueError, SchemaError

__all__ = ["MORE_SPELLINGS", "ROLE_SPELLINGS", "detect_columns", "name_key", "unused_columns_message"]

#: Column spellings tried, in order, for each role when no mapping is given.
ROLE_SPELLINGS: dict[str, tuple[str, ...]] = {
    "item": ("item", "item_id", "task", "task_id", "question", "question_id", "orig_id", "uid", "id"),
    "annotator": ("annotator", "annotator_id", "worker", "worker_id", "!amt_worker_ids", "rater",
                  "user", "performer"),
    "label": ("label", "answer", "response", "annotation", "vote"),
    "gold": ("gold", "gold_label", "truth", "true_label"),
}
#: Spellings tried only when no column has one of ``ROLE_SPELLINGS[role]`` (so a file with
#: ``item`` and ``sentence_id`` columns still reads ``item`` as the item).
MORE_SPELLINGS: dict[str, tuple[str, ...]] = {
    "item": ("sample_id", "example_id", "instance_id", "doc_id", "document_id", "sentence_id",
             "text_id", "pair_id", "post_id", "tweet_id"),
    "annotator": ("rater_id", "user_id", "coder", "coder_id", "labeler", "labeler_id", "labeller",
                  "judge", "judge_id", "participant", "participant_id"),
    "label": ("judgment", "judgement"),
    "gold": ("gold_standard", "reference", "expert_label"),
}


def name_key(name: str) -> str:
    """A column name as spellings are compared: lower case, without blanks, ``_`` and ``-``
    (``Item ID``, ``item-id`` and ``ItemId`` are all ``item_id``)."""
    return "".join(ch for ch in str(name).lower() if ch not in " \t_-")


def detect_columns(columns: Sequence[str], roles: Sequence[str] = ("item", "annotator", "label", "gold"),
                   *, given: Mapping[str, str | None] | None = None,
                   source: str = "votes") -> dict[str, str | None]:
    """Map roles to column names: ``given`` first, then the one matching spelling, compared by
    :func:`name_key`; :data:`MORE_SPELLINGS` only when no :data:`ROLE_SPELLINGS` matches.

    Raises
    ------
    InvalidValueError
        An unknown role.
    SchemaError
        A given column that the file does not have, or a role that two columns could fill
        (``label`` and ``answer``): the message names both and the option that settles it.

    Examples
    --------
    >>> detect_columns(["task", "worker", "answer"])
    {'item': 'task', 'annotator': 'worker', 'label': 'answer', 'gold': None}
    """
    given = {k: v for k, v in dict(given or {}).items()}
    unknown = (set(given) | set(roles)) - set(ROLE_SPELLINGS)
    if unknown:
        raise InvalidValueError(f"unknown column role(s) {sorted(unknown)}; roles are {list(ROLE_SPELLINGS)}")
    for role, col in given.items():
        if col is not None and col not in columns:
            raise SchemaError(f"{source} is missing column(s) [{col!r}] (given for {role}); got "
                              f"{list(columns)}")
    by_lower: dict[str, list[str]] = {}
    for c in columns:
        by_lower.setdefault(name_key(c), []).append(c)
    out: dict[str, str | None] = {}
    taken: set[str] = {v for v in given.values() if v}
    for role in roles:
        if role in given:
            out[role] = given[role]
            continue
        found: list[str] = []
        for tier in (ROLE_SPELLINGS, MORE_SPELLINGS):
            found = [c for spelling in tier[role] for c in by_lower.get(name_key(spelling), [])
                     if c not in taken]
            if found:
                break
        if len(found) > 1:
            raise SchemaError(
                f"{source}: columns {found} could each be the {role} column; name one with "
                f"--{role}-col (Python: columns={{'{role}': ...}})"
            )
        out[role] = found[0] if found else None
        if found:
            taken.add(found[0])
    return out


#: Roles a vote table needs, in the order messages name them.
VOTE_ROLES = ("item", "annotator", "label")


def unused_columns_message(columns: Sequence[str], roles: Mapping[str, str | None], *,
                           given: Mapping[str, str | None] | None = None,
                           source: str = "votes") -> str | None:
    """The warning for a table read with a role missing while some of its columns are left
    unused (a misspelled ``anotator`` header), or None.

    A role the caller named as None (``columns={"annotator": None}``) is not missing. The unused
    columns are listed, those resembling a spelling of the missing role first.

    Examples
    --------
    >>> message = unused_columns_message(["item", "anotator", "label"],
    ...                                  {"item": "item", "annotator": None, "label": "label"})
    >>> print(message.split(";")[0])
    votes: no annotator column was found, and column(s) ['anotator'] are not read ('anotator'
    looks like 'annotator')
    """
    import difflib

    given = dict(given or {})
    missing = [r for r in VOTE_ROLES if roles.get(r) is None and r not in given]
    used = {c for c in roles.values() if c} | {c for c in given.values() if c}
    unused = [str(c) for c in columns if c not in used and str(c).strip()]
    if not missing or not unused:
        return None
    spellings = {name_key(s): s for r in missing for tier in (ROLE_SPELLINGS, MORE_SPELLINGS)
                 for s in tier[r]}
    near: dict[str, str] = {}
    for c in unused:
        hit = difflib.get_close_matches(name_key(c), list(spellings), n=1, cutoff=0.75)
        if hit:
            near[c] = spellings[hit[0]]
    unused.sort(key=lambda c: c not in near)
    looks = "; ".join(f"{c!r} looks like {near[c]!r}" for c in unused if c in near)
    role = missing[0]
    what = "the votes are read without annotator ids (counts only)" if role == "annotator" else \
        f"the {role} is then inferred"
    return (f"{source}: no {' or '.join(missing)} column was found, and column(s) {unused} are not "
            f"read{f' ({looks})' if looks else ''}; {what}. If one of them holds the {role}, name "
            f"it with --{role}-col (Python: columns={{'{role}': ...}})"
            + ("; to read without annotators, columns={'annotator': None}" if role == "annotator"
               else ""))
