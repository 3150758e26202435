"""Vocabularies, the text enumerations and the str/bytes conversions of
``mindspore.dataset.text``."""
from __future__ import annotations

import collections
import enum

import numpy as np

__all__ = ["Vocab", "JiebaMode", "NormalizeForm", "SentencePieceModel",
           "SPieceTokenizerLoadType", "SPieceTokenizerOutType", "to_str", "to_bytes"]


class JiebaMode(enum.IntEnum):
    """Segmentation modes of MindSpore's Jieba tokenizer (its tokenizer is absent here)."""
    MIX = 0
    MP = 1
    HMM = 2


class NormalizeForm(enum.IntEnum):
    """Unicode normalization forms of :class:`NormalizeUTF8`."""
    NONE = 0
    NFC = 1
    NFKC = 2
    NFD = 3
    NFKD = 4


class SentencePieceModel(enum.IntEnum):
    """SentencePiece model types (the SentencePiece tokenizer is absent here)."""
    UNIGRAM = 0
    BPE = 1
    CHAR = 2
    WORD = 3


class SPieceTokenizerLoadType(enum.IntEnum):
    """Where a SentencePiece tokenizer loads its model from."""
    FILE = 0
    MODEL = 1


class SPieceTokenizerOutType(enum.IntEnum):
    """What a SentencePiece tokenizer outputs."""
    STRING = 0
    INT = 1


def _check_special_tokens(special_tokens, special_first):
    special_tokens = list(special_tokens or [])
    if len(set(special_tokens)) != len(special_tokens):
        raise ValueError("special_tokens contains duplicate token.")
    if not isinstance(special_first, bool):
        raise TypeError(f"special_first: expected a bool, got {type(special_first).__name__}")
    return special_tokens


def _numbered(words, special_tokens, special_first):
    """``{word: id}``: the special tokens first (or last), then ``words`` in order."""
    ordered = special_tokens + words if special_first else words + special_tokens
    return {word: index for index, word in enumerate(ordered)}


def _tokens_of(value):
    """The str tokens of one column value (a str, bytes or an array of them)."""
    arr = np.asarray(value)
    if arr.dtype.kind == "S":
        arr = np.char.decode(arr, "utf-8")
    if arr.dtype.kind != "U":
        raise TypeError(f"Vocab.from_dataset: expected string columns, got dtype {arr.dtype}")
    return arr.reshape(-1).tolist()


class Vocab:
    """A mapping of tokens to ids, made by :meth:`from_list`, :meth:`from_dict`,
    :meth:`from_file` or :meth:`from_dataset`; :class:`Lookup` uses it."""

    def __init__(self, word_dict=None):
        self._ids = dict(word_dict or {})
        self._tokens = {index: word for word, index in self._ids.items()}

    def vocab(self):
        """The ``{token: id}`` dict."""
        return dict(self._ids)

    def tokens_to_ids(self, tokens):
        """The id of a token (a str) or the ids of a list of tokens; -1 for an unknown one."""
        if isinstance(tokens, np.ndarray):
            tokens = tokens.tolist()
        if isinstance(tokens, str):
            return self._ids.get(tokens, -1)
        return [self._ids.get(token, -1) for token in tokens]

    def ids_to_tokens(self, ids):
        """The token of an id (an int) or the tokens of a list of ids; "" for an unknown
        id."""
        if isinstance(ids, np.ndarray):
            ids = ids.tolist()
        if isinstance(ids, (int, np.integer)):
            return self._tokens.get(int(ids), "")
        return [self._tokens.get(int(index), "") for index in ids]

    @classmethod
    def from_list(cls, word_list, special_tokens=None, special_first=True):
        """Ids in list order, after (or before) ``special_tokens``; a duplicate word is a
        ValueError."""
        words = list(word_list)
        seen = set()
        for word in words:
            if word in seen:
                raise ValueError(f"word_list contains duplicate word: {word}.")
            seen.add(word)
        special_tokens = _check_special_tokens(special_tokens, special_first)
        return cls(_numbered(words, special_tokens, special_first))

    @classmethod
    def from_dict(cls, word_dict):
        """The ``{word: id}`` dict as given (ids must be non-negative ints)."""
        if not isinstance(word_dict, dict):
            raise TypeError(f"word_dict: expected a dict, got {type(word_dict).__name__}")
        for word, index in word_dict.items():
            if not isinstance(index, int) or isinstance(index, bool) or index < 0:
                raise ValueError(f"from_dict: the id of {word!r} must be a non-negative int, "
                                 f"got {index!r}")
        return cls(word_dict)

    @classmethod
    def from_file(cls, file_path, delimiter="", vocab_size=None, special_tokens=None,
                  special_first=True):
        """One word a line (the text before ``delimiter`` when one is given), the first
        ``vocab_size`` lines, numbered after (or before) ``special_tokens``."""
        special_tokens = _check_special_tokens(special_tokens, special_first)
        words = []
        with open(file_path, encoding="utf-8") as f:
            for line in f:
                word = line.rstrip("\r\n")
                if delimiter:
                    word = word.split(delimiter, 1)[0]
                if not word:
                    continue
                if vocab_size is not None and len(words) >= vocab_size:
                    break
                if word in words:
                    raise ValueError(f"from_file: duplicate word {word!r} in {file_path}")
                words.append(word)
        return cls(_numbered(words, special_tokens, special_first))

    @classmethod
    def from_dataset(cls, dataset, columns=None, freq_range=None, top_k=None,
                     special_tokens=None, special_first=True):
        """The words of ``columns`` of ``dataset`` whose count is in ``freq_range`` (min,
        max, both inclusive), most frequent first (ties in lexicographic order), the first
        ``top_k`` of them, numbered after (or before) ``special_tokens``."""
        special_tokens = _check_special_tokens(special_tokens, special_first)
        if isinstance(columns, str):
            columns = [columns]
        counts = collections.Counter()
        for row in dataset.create_dict_iterator(num_epochs=1, output_numpy=True):
            for name in (columns or list(row)):
                counts.update(_tokens_of(row[name]))
        low, high = freq_range if freq_range is not None else (0, None)
        words = sorted((word for word, n in counts.items()
                        if n >= (low or 0) and (high is None or n <= high)),
                       key=lambda word: (-counts[word], word))
        if top_k is not None:
            words = words[:top_k]
        words = [word for word in words if word not in special_tokens]
        return cls(_numbered(words, special_tokens, special_first))


def to_str(array, encoding="utf8"):
    """A numpy array of bytes as an array of str."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"input should be a NumPy array. Got {type(array)}.")
    return np.char.decode(array, encoding)


def to_bytes(array, encoding="utf8"):
    """A numpy array of str as an array of bytes."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"input should be a NumPy array. Got {type(array)}.")
    return np.char.encode(array, encoding)
