"""Label sets, and the coding of raw ids and labels into integers.

This module owns vote coding: every reader (``core.frames`` for pandas frames,
``io.arrow``, ``io.tabular``, ``io.hf``) turns raw values into integer codes and
id tables with its public functions (:func:`factorize_values`,
:func:`factorize_ids`, :func:`as_str_values`, :func:`scalar_to_str`) and a
:class:`LabelSet`; none re-implements them.

Every raw column (item ids, annotator ids, labels) is hashed once in its own
dtype; conversion to ``str`` and the checks for missing or empty values run on
the distinct values only, so a column of millions of votes costs one
``pandas.factorize``. :class:`LabelSet` fixes the label order (the column order
of every count and probability matrix) and resolves aliases.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from annokit.core.scales import (
    NUMERIC_SCALES,
    check_scale,
    number_name,
    number_names,
    ordered_names,
    scale_values,
)
from annokit.errors import AlignmentError, InvalidValueError, SchemaError

__all__ = [
    "CHAOSNLI_NLI_LABELS",
    "MISSING_STRINGS",
    "LabelSet",
    "as_str_values",
    "label_variants",
    "label_variants_message",
    "factorize_ids",
    "factorize_values",
    "scalar_to_str",
]

#: Cell texts read as a missing value (after stripping blanks): only the empty cell. Words such
#: as ``nan``, ``NA``, ``None`` or ``null`` are labels as written unless a reader is told they
#: mean "missing" (``missing=`` in :mod:`annokit.io`, CLI ``--missing``).
MISSING_STRINGS = frozenset({""})


def _natural_key(text: str) -> tuple:
    return tuple(int(t) if t.isdigit() else t for t in re.split(r"(\d+)", text))


def factorize_values(values: Any, *, what: str, where: str) -> tuple[np.ndarray, np.ndarray]:
    """Codes and distinct str values of a column of ids or labels; rejects missing values.

    Hashes the raw column once (keeping its dtype: an int column is not boxed
    into Python objects), then converts and checks only the distinct values.
    Integral floats (``1.0``, typical of pandas columns with gaps) become ``"1"``;
    raw values that convert to the same string (``1`` and ``"1"``) share a code.

    Parameters
    ----------
    values : array-like or Series of shape (n,)
    what : str
        What the values are, for messages ("label", "item id").
    where : str
        Where they come from, for messages (file and column).

    Returns
    -------
    codes : ndarray of int64, shape (n,)
        Position of each value in ``distinct`` (first-seen order).
    distinct : ndarray of str (object), shape (n_distinct,)

    Raises
    ------
    SchemaError
        A missing (NaN/None) or empty value (see :data:`MISSING_STRINGS`), naming its row.

    Examples
    --------
    >>> codes, distinct = factorize_values([2, "2", 1.0, "b"], what="label", where="x")
    >>> codes.tolist(), distinct.tolist()
    ([0, 0, 1, 2], ['2', '1', 'b'])
    """
    raw: pd.Series | np.ndarray
    if isinstance(values, pd.Series):
        raw = values
    else:
        raw = np.asarray(values, dtype=object) if not isinstance(values, np.ndarray) else values
        raw = raw.reshape(-1)
    codes, found = pd.factorize(raw, sort=False, use_na_sentinel=True)
    if len(codes) and (codes < 0).any():
        row = int(np.argmax(codes < 0))
        raise SchemaError(f"{where}: {what} is missing (NaN/None) at row {row}")
    uniques = np.asarray(found)
    if uniques.dtype.kind in "iu":
        # integers: distinct values are distinct, never blank strings; numpy formats them in C
        return codes.astype(np.int64, copy=False), uniques.astype(str).astype(object)
    uniques = uniques.astype(object, copy=False)
    if pd.api.types.infer_dtype(uniques, skipna=False) == "string":
        text = uniques
    else:
        text = np.asarray([scalar_to_str(v) for v in uniques], dtype=object)
    blank = pd.Series(text, dtype=object).str.strip().str.lower().isin(MISSING_STRINGS).to_numpy()
    if blank.any():
        j = int(np.argmax(blank))
        row = int(np.argmax(codes == j))
        raise SchemaError(f"{where}: {what} is empty at row {row} (got {uniques[j]!r})")
    merged, distinct = pd.factorize(text, sort=False)
    if len(distinct) != len(text):
        codes = merged[codes]
    return codes.astype(np.int64, copy=False), np.asarray(distinct, dtype=object)


def as_str_values(values: Any, *, what: str, where: str) -> np.ndarray:
    """Ids or labels as an object array of str (see :func:`factorize_values`)."""
    codes, distinct = factorize_values(values, what=what, where=where)
    return distinct[codes]


def scalar_to_str(v: Any) -> str:
    """The text of one raw id or label: ``True`` -> "true", ``1.0`` -> "1", else ``str(v)``.

    Examples
    --------
    >>> scalar_to_str(np.int64(3)), scalar_to_str(2.0), scalar_to_str(np.True_), scalar_to_str(0.5)
    ('3', '2', 'true', '0.5')
    """
    if isinstance(v, (bool, np.bool_)):
        return str(v).lower()
    if isinstance(v, (float, np.floating)) and float(v).is_integer():
        return str(int(v))
    if isinstance(v, (np.integer,)):
        return str(int(v))
    return str(v)


class LabelSet:
    """An ordered set of label names with aliases.

    Parameters
    ----------
    names : sequence of str
        The labels in their canonical order; the column order of every count
        and probability matrix.
    aliases : mapping of str to str, optional
        Alternative spellings mapped to a canonical name (``{"e": "entailment"}``).
        Lookup is case-sensitive first, then case-insensitive.
    scale : {"nominal", "ordinal", "interval", "ratio"}, default="nominal"
        Level of measurement (:mod:`annokit.core.scales`). Ordinal labels are ordered as
        declared; interval and ratio names must be numbers, kept as ``values``.

    Attributes
    ----------
    values : ndarray of float or None
        The names as numbers when they all are (always on interval and ratio scales).
    numeric : bool
        Whether the labels are numbers: on interval and ratio scales, and on ordinal ones
        whose names are all numbers. Numeric names are written one way
        (:func:`~annokit.core.scales.number_name`: ``"1.0"`` and ``"+1"`` are ``"1"``), and
        :meth:`encode` and :meth:`index_of` take any spelling of a number, so votes and gold
        labels read as ``1``, ``1.0`` or ``" 1"`` are one label. Nominal labels are text as
        written (``"1"`` and ``"1.0"`` are two categories).

    Examples
    --------
    >>> labels = LabelSet(["entailment", "neutral", "contradiction"],
    ...                   aliases={"e": "entailment", "n": "neutral", "c": "contradiction"})
    >>> labels.encode(["n", "entailment", "c"]).tolist()
    [1, 0, 2]
    >>> labels.index_of("C")
    2
    >>> likert = LabelSet(["1", "2.0", "3"], scale="ordinal")
    >>> likert.names, likert.encode([1.0, " 2", "+3"]).tolist()
    (('1', '2', '3'), [0, 1, 2])
    """

    def __init__(self, names: Iterable[Any], *, aliases: Mapping[str, str] | None = None,
                 scale: str = "nominal"):
        names = tuple(scalar_to_str(n) for n in names)
        if not names:
            raise InvalidValueError("a label set needs at least one label")
        if len(set(names)) != len(names):
            dup = sorted({n for n in names if names.count(n) > 1})
            raise InvalidValueError(f"label names must be unique; repeated: {dup}")
        self.scale: str = check_scale(scale)
        self.numeric: bool = False
        if self.scale != "nominal":
            written = number_names(names)
            if self.scale in NUMERIC_SCALES or None not in written:
                scale_values(names, self.scale)  # a name that is not a number: the one message
                numbers = [t for t in written if t is not None]  # every name, after that check
                seen: dict[str, str] = {}
                for name, text in zip(names, numbers, strict=True):
                    if text in seen:
                        raise InvalidValueError(
                            f"labels {seen[text]!r} and {name!r} are the same number on the "
                            f"{self.scale} scale; give each number once")
                    seen[text] = name
                names = tuple(numbers)
                self.numeric = True
        self.names: tuple[str, ...] = names
        self.values: np.ndarray | None = scale_values(names, self.scale)
        self.aliases: dict[str, str] = {}
        for alias, target in (aliases or {}).items():
            alias, target = scalar_to_str(alias), scalar_to_str(target)
            if self.numeric:
                target = number_name(target) or target
            if target not in names:
                raise InvalidValueError(f"alias {alias!r} points to unknown label {target!r}; "
                                        f"labels are {list(names)}")
            if alias in names and alias != target:
                raise InvalidValueError(f"alias {alias!r} is itself a label name")
            self.aliases[alias] = target
        self._lookup: dict[str, int] = {n: i for i, n in enumerate(names)}
        for alias, target in self.aliases.items():
            self._lookup[alias] = self._lookup[target]
        self._lookup_ci: dict[str, int] = {}
        for key, idx in self._lookup.items():
            self._lookup_ci.setdefault(key.lower(), idx)

    @classmethod
    def infer(cls, values: Iterable[Any]) -> LabelSet:
        """Label set of the distinct values, in natural sort order ("2" before "10")."""
        series = values if isinstance(values, pd.Series) else pd.Series(list(values), dtype=object)
        uniq = pd.unique(pd.Series(series.unique(), dtype=object).map(scalar_to_str))
        return cls(sorted(uniq, key=_natural_key))

    @classmethod
    def coerce(cls, labels: LabelSet | Sequence[Any] | None, values: Iterable[Any] = ()) -> LabelSet:
        """A LabelSet from an existing one, a sequence of names, or inferred from ``values``."""
        if isinstance(labels, LabelSet):
            return labels
        if labels is None:
            return cls.infer(values)
        return cls(labels)

    def __len__(self) -> int:
        return len(self.names)

    def __iter__(self):
        return iter(self.names)

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, LabelSet) and self.names == other.names
                and self.aliases == other.aliases and self.scale == other.scale)

    def __hash__(self) -> int:
        return hash((self.names, tuple(sorted(self.aliases.items())), self.scale))

    def __repr__(self) -> str:
        """``LabelSet([...])`` with the aliases and a scale other than nominal; beyond 12
        labels the first six, ``...``, the last, and their number.

        Examples
        --------
        >>> LabelSet([str(v) for v in range(101)], scale="interval")
        LabelSet(['0', '1', '2', '3', '4', '5', ..., '100'] (101), scale='interval')
        """
        names = list(self.names)
        shown = (repr(names) if len(names) <= 12 else
                 f"[{', '.join(map(repr, names[:6]))}, ..., {names[-1]!r}] ({len(names)})")
        extra = f", aliases={self.aliases}" if self.aliases else ""
        extra += f", scale={self.scale!r}" if self.scale != "nominal" else ""
        return f"LabelSet({shown}{extra})"

    def index_of(self, label: Any) -> int:
        """Column index of a label name or alias; raises on an unknown label."""
        key = scalar_to_str(label)
        idx = self._lookup.get(key)
        if idx is None:
            idx = self._lookup_ci.get(key.lower())
        if idx is None and self.numeric:
            idx = self._lookup.get(number_name(label) or "")
        if idx is None:
            raise InvalidValueError(f"unknown label {label!r}; expected one of {self._known()}")
        return idx

    def _known(self) -> list[str]:
        return list(self.names) + [a for a in self.aliases if a not in self.names]

    def canonical(self, label: Any) -> str:
        """The canonical name for a label name or alias."""
        return self.names[self.index_of(label)]

    def encode(self, values: Any, *, where: str = "labels") -> np.ndarray:
        """Map raw label values (names, aliases, ints) to column indices.

        Vectorised: each distinct value is looked up once. Raises
        :class:`~annokit.errors.InvalidValueError` naming the first unknown value and its
        row (:class:`~annokit.errors.SchemaError` for a missing or empty one).
        """
        codes, uniques = factorize_values(values, what="label", where=where)
        table = np.empty(len(uniques), dtype=np.int64)
        for j, u in enumerate(uniques):
            try:
                table[j] = self.index_of(u)
            except InvalidValueError:
                row = int(np.argmax(codes == j))
                raise InvalidValueError(
                    f"{where}: unknown label {u!r} at row {row}; expected one of {self._known()}"
                ) from None
        return table[codes] if len(codes) else np.zeros(0, dtype=np.int64)

    def permutation_to(self, names: Sequence[Any]) -> np.ndarray:
        """Indices ``p`` such that ``matrix_in_names_order[:, p]`` is in this set's order.

        ``names`` must be the same labels (by name or alias) in some order.
        """
        idx = [self.index_of(n) for n in names]
        if sorted(idx) != list(range(len(self))):
            raise AlignmentError(
                f"label order {list(names)} does not name each of {list(self.names)} exactly once"
            )
        return np.argsort(np.asarray(idx))

    def to_scale(self, scale: str, *, declared: bool = False) -> tuple[LabelSet, np.ndarray]:
        """This label set on ``scale``, and the new code of each of its labels.

        On ordinal (numeric names), interval and ratio scales labels are numbers: names that
        spell the same number (``"1"``, ``"1.0"``, ``" 1"``) become one label, so the code
        map may send several labels to one. Ordinal labels that are not numbers keep their
        order when ``declared`` (else their order cannot be inferred).

        Parameters
        ----------
        scale : {"nominal", "ordinal", "interval", "ratio"}
        declared : bool, default=False
            Whether this order was declared (``labels=[...]``, CLI ``--labels``): it is kept
            (first spelling of each number); otherwise numbers are put in numeric order.

        Returns
        -------
        labels : LabelSet
        codes : ndarray of int64, shape (len(self),)
            ``codes[j]`` is the new index of label ``j``.

        Raises
        ------
        InvalidValueError
            A name that is not a number on an interval or ratio scale (the message names it
            and ``--scale nominal``), a negative one on a ratio scale, or undeclared ordinal
            names that are not numbers.

        Examples
        --------
        >>> new, codes = LabelSet(["2", "1.0", "1", "10"]).to_scale("interval")
        >>> new.names, codes.tolist()
        (('1', '2', '10'), [1, 0, 0, 2])
        """
        check_scale(scale)
        written = number_names(self.names) if scale != "nominal" else [None]
        if scale == "nominal" or (scale == "ordinal" and None in written):
            names = list(self.names) if declared else ordered_names(self.names, scale)
            new = LabelSet(names, aliases=self.aliases, scale=scale)
            return new, np.asarray([new.index_of(n) for n in self.names], dtype=np.int64)
        scale_values(self.names, scale)  # raises naming the first name that is not a number
        numbers = [t for t in written if t is not None]  # every name, after that check
        distinct = list(dict.fromkeys(numbers))
        names = distinct if declared else ordered_names(distinct, scale)
        position = {n: j for j, n in enumerate(names)}
        codes = np.asarray([position[t] for t in numbers], dtype=np.int64)
        number_of = dict(zip(self.names, numbers, strict=True))  # alias targets are label names
        aliases = {a: number_of[t] for a, t in self.aliases.items() if a not in position}
        return LabelSet(names, aliases=aliases, scale=scale), codes

    def to_dict(self) -> dict[str, Any]:
        return {"names": list(self.names), "aliases": dict(self.aliases), "scale": self.scale}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> LabelSet:
        return cls(data["names"], aliases=data.get("aliases") or {},
                   scale=data.get("scale") or "nominal")


CHAOSNLI_NLI_LABELS = LabelSet(
    ["entailment", "neutral", "contradiction"],
    aliases={"e": "entailment", "n": "neutral", "c": "contradiction"},
)


def factorize_ids(values: Any, *, what: str, where: str,
                   order: Sequence[str] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Integer codes (first-seen order, or ``order``) and the id table for a column of ids.

    Raises
    ------
    SchemaError
        A missing or empty id, or (with ``order``) an id not in ``order``.

    Examples
    --------
    >>> codes, ids = factorize_ids(["b", "a", "b"], what="item id", where="x", order=["a", "b"])
    >>> codes.tolist(), ids.tolist()
    ([1, 0, 1], ['a', 'b'])
    """
    codes, distinct = factorize_values(values, what=what, where=where)
    if order is None:
        return codes, distinct
    ids = np.asarray([scalar_to_str(v) for v in order], dtype=object)
    position = pd.Index(ids).get_indexer(distinct)
    if (position < 0).any():
        j = int(np.argmax(position < 0))
        row = int(np.argmax(codes == j))
        raise SchemaError(f"{where}: {what} {distinct[j]!r} at row {row} is not in the given ids")
    return position[codes].astype(np.int64), ids


#: A label this many times rarer than a label one edit away from it is called a likely typo.
TYPO_RATIO = 20


def _one_edit(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` differ by one insertion, deletion, substitution or swap of two
    neighbouring characters (Damerau-Levenshtein distance 1)."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]
        return len(diff) == 1 or (len(diff) == 2 and diff[1] == diff[0] + 1
                                  and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]])
    short, long_ = (a, b) if len(a) < len(b) else (b, a)
    i = next((k for k, (x, y) in enumerate(zip(short, long_[:len(short)], strict=True))
              if x != y), len(short))
    return short[i:] == long_[i + 1:]


def _fold(name: str) -> str:
    """A label as variants are compared: case folded, without blanks, ``_`` and ``-``."""
    return re.sub(r"[\s_-]+", "", name.casefold())


def label_variants(names: Sequence[str], counts: Sequence[int]) -> tuple[list[list[str]],
                                                                          list[tuple[str, str]]]:
    """Labels that look like spellings of one label: groups differing only by letter case,
    blanks, ``_`` or ``-`` (``dog``, ``Dog``, ``dog ``; ``not_sure``, ``not sure``), and
    ``(rare, common)`` pairs one edit apart whose ``rare`` label has at most
    1/:data:`TYPO_RATIO` of the votes of ``common`` (numbers, and two labels both under three
    characters, are never typos of each other).

    Examples
    --------
    >>> label_variants(["cat", "dgo", "dog", "dog ", "Dog"], [500, 1, 490, 1, 2])
    ([['dog', 'Dog', 'dog ']], [('dgo', 'dog')])
    """
    n = dict(zip(names, (int(c) for c in counts), strict=True))
    folded: dict[str, list[str]] = {}
    for name in names:
        folded.setdefault(_fold(name), []).append(name)
    groups = [sorted(g, key=lambda s: -n[s]) for g in folded.values() if len(g) > 1]
    heads = {key: max(g, key=lambda s: n[s]) for key, g in folded.items()}
    keys = list(heads)
    typos = []
    for i, near in enumerate(_near_keys(keys)):
        key = keys[i]
        if number_name(key) is None:
            votes = sum(n[s] for s in folded[key])
            big = next((heads[keys[j]] for j in sorted(near)
                        if max(len(key), len(keys[j])) >= 3 and number_name(keys[j]) is None
                        and _one_edit(key, keys[j]) and votes * TYPO_RATIO <= n[heads[keys[j]]]),
                       None)
            if big is not None:
                typos.append((heads[key], big))
    return groups, typos


def _deletions(key: str) -> set[str]:
    return {key, *(key[:j] + key[j + 1:] for j in range(len(key)))}


def _near_keys(keys: Sequence[str]) -> list[set[int]]:
    """For each key, the positions of the keys that may be one edit from it: those sharing a
    string with at most one character deleted (every insertion, deletion, substitution or
    swap of neighbours does), a superset :func:`_one_edit` then checks; linear in the number
    of labels where comparing every pair was quadratic."""
    by_string: dict[str, list[int]] = {}
    for i, key in enumerate(keys):
        for variant in _deletions(key):
            by_string.setdefault(variant, []).append(i)
    out = []
    for i, key in enumerate(keys):
        near = {j for variant in _deletions(key) for j in by_string[variant]}
        near.discard(i)
        out.append(near)
    return out


def label_variants_message(names: Sequence[str], counts: Sequence[int], source: str) -> str | None:
    """The warning for :func:`label_variants` found among labels read from ``source`` (None when
    there are none): the variants with their votes and the two fixes."""
    groups, typos = label_variants(names, counts)
    if not groups and not typos:
        return None
    n = dict(zip(names, (int(c) for c in counts), strict=True))

    def shown(name: str) -> str:
        return f"{name!r} ({n[name]:,} vote{'s' if n[name] != 1 else ''})"

    parts = [f"labels that differ only by case, spaces, '_' or '-': "
             f"{', '.join(shown(s) for s in g)}" for g in groups]
    parts += [f"label {shown(rare)} is one edit away from {shown(big)}" for rare, big in typos]
    return (f"{source}: {'; '.join(parts)}; they are read as separate labels. Correct their "
            "spelling in the file, or give the label set with --labels (Python: labels=[...]): "
            "votes are then matched to it ignoring case, and any other spelling is an error "
            "naming its line")
