"""The text transforms of ``mindspore.dataset.text``: tokenizers, look-ups and sequence
edits, each a callable on numpy arrays (or a str) for ``Dataset.map``."""
from __future__ import annotations

import re
import unicodedata

import numpy as np

from mscore.common import dtype as mstype
from mscore.dataset.text.utils import NormalizeForm, Vocab
from mscore.dataset.transforms.transforms import PyTensorOperation, np_dtype

__all__ = ["Lookup", "ToNumber", "WhitespaceTokenizer", "UnicodeCharTokenizer",
           "RegexTokenizer", "RegexReplace", "CaseFold", "NormalizeUTF8", "PythonTokenizer",
           "SlidingWindow", "Ngram", "Truncate", "TruncateSequencePair", "AddToken"]

_INT32_MAX = 2147483647


def _text_of(value, name):
    """The one string a tokenizer splits: a str, bytes, or a 0-d array of either."""
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value.item()
    if isinstance(value, bytes):
        value = value.decode("utf-8")
    if not isinstance(value, str):
        raise TypeError(f"{name}: expected a string (a str or a 0-d string array), got "
                        f"{type(value).__name__}")
    return value


def _strings(value):
    """A numpy array of str (bytes decoded as UTF-8)."""
    arr = np.asarray(value)
    if arr.dtype.kind == "S":
        arr = np.char.decode(arr, "utf-8")
    return arr


def _tokens(tokens, spans, text, with_offsets):
    """The tokens as an array, with their UTF-8 byte offsets when asked; no token at all is
    one empty token at offset 0 (as MindSpore's tokenizers give it)."""
    if not tokens:
        tokens, spans = [""], [(0, 0)]
    out = np.array(tokens, dtype=str)
    if not with_offsets:
        return out
    byte_at = np.cumsum([0] + [len(ch.encode("utf-8")) for ch in text])
    begins = np.array([byte_at[b] for b, _ in spans], dtype=np.uint32)
    ends = np.array([byte_at[e] for _, e in spans], dtype=np.uint32)
    return out, begins, ends


def _check_bool(value, name):
    if not isinstance(value, bool):
        raise TypeError(f"{name}: expected a bool, got {type(value).__name__}")
    return value


def _check_positive_int(value, name, maximum=_INT32_MAX):
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{name}: expected an int, got {type(value).__name__}")
    if not 1 <= value <= maximum:
        raise ValueError(f"Input {name} is not within the required interval of "
                         f"[1, {maximum}].")
    return value


class Lookup(PyTensorOperation):
    """Tokens to ids by ``vocab``; an unknown token becomes the id of ``unknown_token``
    (a RuntimeError without one). Ids are of ``data_type`` (int32 by default)."""

    def __init__(self, vocab, unknown_token=None, data_type=mstype.int32):
        if not isinstance(vocab, Vocab):
            raise TypeError(f"vocab: expected a text.Vocab, got {type(vocab).__name__}")
        self._ids = vocab.vocab()
        self._unknown = None
        if unknown_token is not None:
            if unknown_token not in self._ids:
                raise RuntimeError(f'Lookup: "{unknown_token}" doesn\'t exist in vocab.')
            self._unknown = self._ids[unknown_token]
        self._dtype = np_dtype(data_type if data_type is not None else "int32")

    def _id(self, token):
        index = self._ids.get(token, self._unknown)
        if index is None:
            raise RuntimeError(f'Lookup: invalid data, token: "{token}" doesn\'t exist in '
                               f'vocab and no unknown token is specified.')
        return index

    def __call__(self, tokens):
        arr = _strings(tokens)
        ids = [self._id(token) for token in arr.reshape(-1).tolist()]
        return np.array(ids, dtype=self._dtype).reshape(arr.shape)


class ToNumber(PyTensorOperation):
    """Strings to numbers of ``data_type``; a string that is no number, or out of the
    type's range, is a RuntimeError."""

    def __init__(self, data_type):
        self._dtype = np_dtype(data_type)
        if self._dtype.kind not in "iuf":
            raise TypeError(f"data_type: expected a numeric type, got {self._dtype}")

    def _number(self, text):
        try:
            value = int(text) if self._dtype.kind in "iu" else float(text)
        except ValueError:
            raise RuntimeError(f'ToNumber: it is invalid to convert "{text}" to a '
                               f'number.') from None
        if self._dtype.kind in "iu":
            info = np.iinfo(self._dtype)
            if not info.min <= value <= info.max:
                raise RuntimeError(f"ToNumber: string input {text} will be out of bounds if "
                                   f"cast to {self._dtype}. The valid range is: "
                                   f"[{info.min}, {info.max}].")
        return value

    def __call__(self, strings):
        arr = _strings(strings)
        values = [self._number(text) for text in arr.reshape(-1).tolist()]
        return np.array(values, dtype=self._dtype).reshape(arr.shape)


class _SpanTokenizer(PyTensorOperation):
    """A tokenizer defined by the (begin, end) character spans of its tokens."""

    def __init__(self, with_offsets=False):
        self.with_offsets = _check_bool(with_offsets, "with_offsets")

    def _spans(self, text):
        raise NotImplementedError

    def __call__(self, text):
        text = _text_of(text, type(self).__name__)
        spans = self._spans(text)
        return _tokens([text[b:e] for b, e in spans], spans, text, self.with_offsets)


class WhitespaceTokenizer(_SpanTokenizer):
    """Split a string on whitespace; ``with_offsets`` adds the UTF-8 byte offsets of each
    token (begins, ends; uint32)."""

    def _spans(self, text):
        return [m.span() for m in re.finditer(r"\S+", text)]


class UnicodeCharTokenizer(_SpanTokenizer):
    """Split a string into its characters (offsets in UTF-8 bytes with ``with_offsets``)."""

    def _spans(self, text):
        return [(i, i + 1) for i in range(len(text))]


class RegexTokenizer(_SpanTokenizer):
    """Split a string at the matches of ``delim_pattern``; a delimiter that matches
    ``keep_delim_pattern`` whole is kept as a token."""

    def __init__(self, delim_pattern, keep_delim_pattern="", with_offsets=False):
        super().__init__(with_offsets)
        self._delim = re.compile(delim_pattern)
        self._keep = re.compile(keep_delim_pattern) if keep_delim_pattern else None

    def _spans(self, text):
        spans, start = [], 0
        for m in self._delim.finditer(text):
            if m.start() > start:
                spans.append((start, m.start()))
            if self._keep is not None and m.end() > m.start() and \
                    self._keep.fullmatch(m.group()):
                spans.append(m.span())
            start = m.end()
        if start < len(text):
            spans.append((start, len(text)))
        return spans


def _map_strings(value, function):
    """``function`` applied to each string of ``value`` (a str or an array of str)."""
    if isinstance(value, (str, bytes)):
        return np.array(function(_text_of(value, "text")))
    arr = _strings(value)
    out = [function(text) for text in arr.reshape(-1).tolist()]
    return np.array(out, dtype=str).reshape(arr.shape)


class RegexReplace(PyTensorOperation):
    """Replace the matches of ``pattern`` by ``replace`` (only the first one unless
    ``replace_all``)."""

    def __init__(self, pattern, replace, replace_all=True):
        self._pattern = re.compile(pattern)
        self._replace = replace
        self._count = 0 if _check_bool(replace_all, "replace_all") else 1

    def __call__(self, text):
        return _map_strings(text, lambda s: self._pattern.sub(self._replace, s,
                                                              count=self._count))


_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def ascii_lower(text):
    """``text`` with A-Z lower-cased and every other character kept (C's ``tolower``, as
    MindSpore's C++ kernels lower-case)."""
    return text.translate(_ASCII_LOWER)


# Default_Ignorable_Code_Point ranges that NFKC_Casefold removes (Unicode's DerivedCoreProperties)
_IGNORABLE = re.compile("[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f"
                        "\u200b-\u200f\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f"
                        "\ufeff\uffa0\ufff0-\ufff8\U0001bca0-\U0001bca3"
                        "\U0001d173-\U0001d17a\U000e0000-\U000e0fff]")


def nfkc_casefold(text):
    """Unicode's NFKC_Casefold of ``text`` (what MindSpore's ICU-based case folding does):
    compatibility forms unified (``"ﬁ"`` -> ``"fi"``, ``"①"`` -> ``"1"``), case folded, and
    default-ignorable characters (zero-width space, soft hyphen, ...) removed."""
    folded = unicodedata.normalize("NFKC", _IGNORABLE.sub("", text)).casefold()
    return unicodedata.normalize("NFKC", folded)


class CaseFold(PyTensorOperation):
    """Unicode NFKC case folding (caseless matching: ``"ÄB"`` becomes ``"äb"``, ``"ｆ①"``
    becomes ``"f1"``)."""

    def __call__(self, text):
        return _map_strings(text, nfkc_casefold)


class NormalizeUTF8(PyTensorOperation):
    """Unicode normalization to ``normalize_form`` (NFKC by default; NONE leaves the text
    as it is)."""

    def __init__(self, normalize_form=NormalizeForm.NFKC):
        if not isinstance(normalize_form, NormalizeForm):
            raise TypeError(f"normalize_form: expected a text.NormalizeForm, got "
                            f"{type(normalize_form).__name__}")
        self._form = normalize_form

    def __call__(self, text):
        if self._form is NormalizeForm.NONE:
            return _map_strings(text, lambda s: s)
        return _map_strings(text, lambda s: unicodedata.normalize(self._form.name, s))


class PythonTokenizer(PyTensorOperation):
    """Tokenize with a Python function of a str returning a list of str."""

    def __init__(self, tokenizer):
        if not callable(tokenizer):
            raise TypeError(f"tokenizer: expected a callable, got {type(tokenizer).__name__}")
        self._tokenizer = tokenizer

    def __call__(self, text):
        if not isinstance(text, np.ndarray):
            raise TypeError(f"input should be a NumPy array. Got {type(text)}.")
        return np.array(self._tokenizer(_text_of(text, "PythonTokenizer")), dtype=str)


class SlidingWindow(PyTensorOperation):
    """The windows of ``width`` consecutive elements along ``axis`` of a 1-D array, as
    rows of a 2-D array (empty when the array is shorter than ``width``)."""

    def __init__(self, width, axis=0):
        self._width = _check_positive_int(width, "width")
        self._axis = axis

    def __call__(self, values):
        arr = np.asarray(values)
        if arr.ndim != 1:
            raise RuntimeError(f"SlidingWindow: SlidingWindow supports 1D input only for "
                               f"now, but got {arr.ndim}D.")
        count = arr.shape[0] - self._width + 1
        if count <= 0:
            return np.array([], dtype=arr.dtype)
        return np.stack([arr[i:i + self._width] for i in range(count)])


class Ngram(PyTensorOperation):
    """The n-grams of a 1-D string array for each n of ``n``, joined by ``separator``;
    ``left_pad`` / ``right_pad`` are ``(token, width)`` added at each end (at most n - 1 of
    them). Without any n-gram the result is ``[""]``."""

    def __init__(self, n, left_pad=("", 0), right_pad=("", 0), separator=" "):
        self._ns = [n] if isinstance(n, int) else list(n)
        for size in self._ns:
            _check_positive_int(size, "n")
        self._left, self._right, self._separator = left_pad, right_pad, separator

    def __call__(self, tokens):
        words = _strings(tokens).reshape(-1).tolist()
        grams = []
        for size in self._ns:
            padded = ([self._left[0]] * min(self._left[1], size - 1) + words
                      + [self._right[0]] * min(self._right[1], size - 1))
            grams += [self._separator.join(padded[i:i + size])
                      for i in range(len(padded) - size + 1)]
        return np.array(grams or [""], dtype=str)


class Truncate(PyTensorOperation):
    """The first ``max_seq_len`` elements of a 1-D array."""

    def __init__(self, max_seq_len):
        self._max = _check_positive_int(max_seq_len, "max_seq_len")

    def __call__(self, values):
        return np.asarray(values)[:self._max]


class TruncateSequencePair(PyTensorOperation):
    """Shorten two 1-D arrays to ``max_length`` elements together, one element at a time
    from the end of the longer one (the second on a tie)."""

    def __init__(self, max_length):
        self._max = _check_positive_int(max_length, "max_length")

    def __call__(self, first, second):
        first, second = np.asarray(first), np.asarray(second)
        a, b = len(first), len(second)
        while a + b > self._max:
            if a > b:
                a -= 1
            else:
                b -= 1
        return first[:a], second[:b]


class AddToken(PyTensorOperation):
    """Add ``token`` at the beginning (``begin=True``) or the end of a 1-D string array."""

    def __init__(self, token, begin=True):
        if not isinstance(token, str):
            raise TypeError(f"token: expected a str, got {type(token).__name__}")
        self._token, self._begin = token, _check_bool(begin, "begin")

    def __call__(self, tokens):
        words = _strings(tokens).reshape(-1).tolist()
        return np.array([self._token] + words if self._begin else words + [self._token],
                        dtype=str)
