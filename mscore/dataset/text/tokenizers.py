"""The ICU-based tokenizers of ``mindspore.dataset.text`` (``BasicTokenizer``,
``WordpieceTokenizer``, ``BertTokenizer``, ``UnicodeScriptTokenizer``) and
``FilterWikipediaXML``, on Python's ``unicodedata`` and ``re``.

ICU's character classes are built from ``unicodedata`` (Unicode 14 in Python 3.11): ``\\p{P}``
punctuation, ``\\p{Mn}`` marks, ``\\p{Cc}|\\p{Cf}`` controls and ICU's ``\\s``
(``[\\t\\n\\f\\r\\p{Z}]``); scripts come from the Unicode Script property table of
:mod:`._unicode_scripts`. Offsets are UTF-8 byte offsets into the text the tokenizer split
(after its normalization), as in MindSpore.

Approximations: ICU's NFKC case folding is NFKC, ``str.casefold`` and NFKC again with the
default-ignorable characters removed (:func:`.transforms.nfkc_casefold`); the character
properties are those of Python's Unicode version and of the script table's, so a character
that a later Unicode version assigned or recategorized can split differently than with
MindSpore's ICU. The recorded cases (Latin with accents, CJK, Hiragana/Katakana, Hangul,
Cyrillic, Greek, Arabic, Hebrew, Devanagari, Thai, digits, punctuation, controls, zero-width
and full-width characters) give MindSpore's tokens and offsets.
"""
from __future__ import annotations

import functools
import re
import unicodedata

import numpy as np

from mscore.dataset.text._checks import check_bool, check_str, check_uint32, scalar_text
from mscore.dataset.text._unicode_scripts import script_of
from mscore.dataset.text.transforms import (
    CaseFold,
    NormalizeUTF8,
    RegexReplace,
    RegexTokenizer,
    _map_strings,
    _tokens,
    ascii_lower,
    nfkc_casefold,
)
from mscore.dataset.text.utils import NormalizeForm, Vocab
from mscore.dataset.transforms.transforms import PyTensorOperation

__all__ = ["BasicTokenizer", "WordpieceTokenizer", "BertTokenizer", "UnicodeScriptTokenizer",
           "FilterWikipediaXML"]


# The planes that hold assigned characters of these categories (planes 4 to 13 are empty,
# 15 and 16 private use): scanning only them keeps the one-off build short.
_SCANNED = (range(0x40000), range(0xE0000, 0xE1000))


@functools.cache
def _char_class(categories):
    """A regex character class of every code point whose general category starts with one
    of ``categories`` (built once, from ``unicodedata``)."""
    ranges = []
    for plane in _SCANNED:
        for code in plane:
            if unicodedata.category(chr(code)).startswith(categories):
                if ranges and ranges[-1][1] == code - 1:
                    ranges[-1][1] = code
                else:
                    ranges.append([code, code])
    return "".join(f"\\U{a:08x}" if a == b else f"\\U{a:08x}-\\U{b:08x}" for a, b in ranges)


_UNUSED = r"\[CLS\]|\[SEP\]|\[UNK\]|\[PAD\]|\[MASK\]|\[unused\d+\]"
_CJK = ("\\u4e00-\\u9fff\\u3400-\\u4dbf\\U00020000-\\U0002a6df\\U0002a700-\\U0002b73f"
        "\\U0002b740-\\U0002b81f\\U0002b820-\\U0002ceaf\\uf900-\\ufaff\\U0002f800-\\U0002fa1f")


def _common_pattern():
    """MindSpore's BERT split characters: ASCII punctuation, ``\\p{P}`` and CJK ideographs,
    each one a token."""
    return f"[!-/:-@\\[-`{{-~{_char_class(('P',))}{_CJK}]"


def _whitespace_pattern():
    return f"[\\t\\n\\f\\r{_char_class(('Z',))}]+"


def _case_fold_keeping_unused(text):
    """MindSpore 2.10's case folding that keeps ``[CLS]``, ``[SEP]``, ``[UNK]``, ``[PAD]``
    and ``[MASK]``, quirks included: a bracket scan over the UTF-8 bytes finds them (a
    ``[`` restarts the word but not its length count); the text before each one is folded
    from the start of the text, so earlier parts repeat; unless the last one ends the text,
    the whole text follows folded."""
    raw = text.encode("utf-8")
    kept, begin, length = [], -1, 0
    for i, byte in enumerate(raw):
        if byte == ord("["):
            begin, length = i, length + 1
        elif byte == ord("]") and begin >= 0:
            length += 1
            if raw[begin:begin + length] in _KEPT_WORDS:
                kept.append((begin, begin + length))
            begin, length = -1, 0
        elif begin >= 0:
            length += 1
    pieces = []
    for begin, end in kept:
        pieces += [nfkc_casefold(raw[:begin].decode("utf-8")), raw[begin:end].decode("utf-8")]
    if not kept or kept[-1][1] < len(raw):
        pieces.append(nfkc_casefold(text))
    return "".join(pieces)


_KEPT_WORDS = {b"[CLS]", b"[SEP]", b"[UNK]", b"[PAD]", b"[MASK]"}


def _check_form(normalization_form):
    if not isinstance(normalization_form, NormalizeForm):
        raise TypeError("Wrong input type for normalization_form, should be enum of "
                        "'NormalizeForm'.")
    return normalization_form


def _scalar_text(text, who):
    """The one str a scalar-input tokenizer splits, with MindSpore's errors."""
    if isinstance(text, str):
        return text
    arr = np.asarray(text)
    if arr.ndim != 0:
        raise RuntimeError(f"{who}: the input should be a scalar, but got a tensor with "
                           f"rank: {arr.ndim}")
    if arr.dtype.kind != "U":
        raise RuntimeError(f"{who}: the input should be of type string.")
    return arr.item()


class BasicTokenizer(PyTensorOperation):
    """Split a string at whitespace, punctuation and CJK ideographs (each punctuation mark
    and ideograph a token of its own). ``lower_case`` folds case (NFKC case folding) and
    strips accents; otherwise ``normalization_form`` is applied. Control and format
    characters become spaces; ``keep_whitespace`` keeps the whitespace runs as tokens;
    ``preserve_unused_token`` keeps ``[CLS]``, ``[SEP]``, ``[UNK]``, ``[PAD]``, ``[MASK]``
    and ``[unusedN]`` whole. ``with_offsets`` adds the UTF-8 byte offsets of the tokens in
    the normalized text."""

    def __init__(self, lower_case=False, keep_whitespace=False,
                 normalization_form=NormalizeForm.NONE, preserve_unused_token=True,
                 with_offsets=False):
        self.lower_case = check_bool(lower_case, "lower_case")
        self.keep_whitespace = check_bool(keep_whitespace, "keep_whitespace")
        self.preserve_unused_token = check_bool(preserve_unused_token,
                                                "preserve_unused_token")
        self.with_offsets = check_bool(with_offsets, "with_offsets")
        self.normalization_form = _check_form(normalization_form)
        self._normalize = NormalizeUTF8(normalization_form)
        self._decompose = NormalizeUTF8(NormalizeForm.NFD)
        self._strip_accents = RegexReplace(f"[{_char_class(('Mn',))}]", "")
        self._controls_to_spaces = RegexReplace(f"[{_char_class(('Cc', 'Cf'))}]", " ")
        delim = f"{_whitespace_pattern()}|{_common_pattern()}"
        keep = delim if keep_whitespace else _common_pattern()
        if preserve_unused_token:
            delim, keep = f"{_UNUSED}|{delim}", f"{_UNUSED}|{keep}"
        self._split = RegexTokenizer(delim, keep, with_offsets)

    def normalized(self, text):
        """The text as the tokenizer splits it (folded or normalized, controls as spaces)."""
        if self.lower_case:
            text = (_case_fold_keeping_unused(text) if self.preserve_unused_token
                    else CaseFold()(text))
            text = self._strip_accents(self._decompose(text))
        else:
            text = self._normalize(text)
        return self._controls_to_spaces(text)

    def __call__(self, text):
        return self._split(self.normalized(_scalar_text(text, "BasicTokenizer")))


def _check_wordpiece(vocab, suffix_indicator, max_bytes_per_token, unknown_token,
                     with_offsets):
    if vocab is None:
        raise ValueError("vocab is not provided.")
    if not isinstance(vocab, Vocab):
        raise TypeError("Wrong input type for vocab, should be text.Vocab object.")
    check_str(suffix_indicator, "suffix_indicator")
    check_str(unknown_token, "unknown_token")
    check_bool(with_offsets, "with_offsets")
    check_uint32(max_bytes_per_token)


class WordpieceTokenizer(PyTensorOperation):
    """Split each word of a string tensor (a scalar or 1-D) into the longest pieces found in
    ``vocab`` from its start, the pieces after the first marked by ``suffix_indicator``. A
    word with an unsplittable rest, or longer than ``max_bytes_per_token`` bytes, becomes
    ``unknown_token`` (the word itself when that is ``""``).

    ``with_offsets`` adds UTF-8 byte offsets within each word, kept as MindSpore 2.10 gives
    them: the offsets of the pieces found before an unsplittable rest stay in the offset
    columns, and the end of an over-long word's ``unknown_token`` is its start plus the
    length of ``unknown_token``."""

    def __init__(self, vocab, suffix_indicator="##", max_bytes_per_token=100,
                 unknown_token="[UNK]", with_offsets=False):
        _check_wordpiece(vocab, suffix_indicator, max_bytes_per_token, unknown_token,
                         with_offsets)
        self.vocab, self.suffix_indicator = vocab, suffix_indicator
        self.max_bytes_per_token, self.unknown_token = max_bytes_per_token, unknown_token
        self.with_offsets = with_offsets
        self._ids = vocab.vocab()

    def _longest_piece(self, word, start, ends):
        """The end (a byte offset) of the longest vocabulary piece at byte ``start``."""
        for end in reversed(ends):
            if end <= start:
                return None
            piece = word[start:end].decode("utf-8")
            if (self.suffix_indicator + piece if start > 0 else piece) in self._ids:
                return end
        return None

    def pieces(self, word, base, starts, limits):
        """The pieces of ``word``, appending their offsets (from ``base``) to ``starts`` and
        ``limits``."""
        raw = word.encode("utf-8")
        if len(raw) > self.max_bytes_per_token:
            token = self.unknown_token or word
            starts.append(base)
            limits.append(base + len(token.encode("utf-8")))
            return [token]
        ends = np.cumsum([len(c.encode("utf-8")) for c in word]).tolist()
        tokens, start = [], 0
        while start < len(raw):
            end = self._longest_piece(raw, start, ends)
            if end is None:
                starts.append(base)
                limits.append(base + len(raw))
                return [self.unknown_token or word]
            piece = raw[start:end].decode("utf-8")
            tokens.append(self.suffix_indicator + piece if start > 0 else piece)
            starts.append(base + start)
            limits.append(base + end)
            start = end
        return tokens

    def split(self, words, bases):
        """The pieces of all ``words`` with their offsets (``bases``: each word's start)."""
        tokens, starts, limits = [], [], []
        for word, base in zip(words, bases):
            tokens += self.pieces(word, base, starts, limits)
        if not tokens:
            tokens, starts, limits = [""], [0], [0]
        out = np.array(tokens, dtype=str)
        if not self.with_offsets:
            return out
        return out, np.array(starts, np.uint32), np.array(limits, np.uint32)

    def __call__(self, words):
        error = ("WordpieceTokenizer: The input shape should be 1D scalar the input datatype "
                 "should be string.")
        arr = np.asarray(words)
        if arr.ndim > 1 or arr.dtype.kind != "U":
            raise RuntimeError(error)
        if arr.size == 0:
            raise RuntimeError("Input Tensor has no data.")
        words = arr.reshape(-1).tolist()
        return self.split(words, [0] * len(words))


class BertTokenizer(PyTensorOperation):
    """:class:`BasicTokenizer` then :class:`WordpieceTokenizer` on each of its tokens (see
    them for the arguments); offsets are UTF-8 byte offsets in the normalized text."""

    def __init__(self, vocab, suffix_indicator="##", max_bytes_per_token=100,
                 unknown_token="[UNK]", lower_case=False, keep_whitespace=False,
                 normalization_form=NormalizeForm.NONE, preserve_unused_token=True,
                 with_offsets=False):
        if vocab is None:
            raise ValueError("vacab is not provided.")  # MindSpore 2.10's spelling
        if not isinstance(vocab, Vocab):
            raise TypeError("Wrong input type for vocab, should be text.Vocab object.")
        check_str(suffix_indicator, "suffix_indicator")
        if not isinstance(max_bytes_per_token, int):
            raise TypeError("Wrong input type for max_bytes_per_token, should be int.")
        check_uint32(max_bytes_per_token)
        check_str(unknown_token, "unknown_token")
        self._basic = BasicTokenizer(lower_case, keep_whitespace, normalization_form,
                                     preserve_unused_token, True)
        self._wordpiece = WordpieceTokenizer(vocab, suffix_indicator, max_bytes_per_token,
                                             unknown_token, with_offsets)
        self.with_offsets = with_offsets

    def __call__(self, text):
        words, starts, _ = self._basic(text)
        return self._wordpiece.split(words.tolist(), starts.tolist())


class UnicodeScriptTokenizer(PyTensorOperation):
    """Split a string where the Unicode script changes (Latin, Han, Cyrillic, ... ; digits
    and punctuation are of the common script) and between whitespace and the rest;
    ``keep_whitespace`` keeps the whitespace runs; ``with_offsets`` adds UTF-8 byte
    offsets."""

    def __init__(self, keep_whitespace=False, with_offsets=False):
        self.keep_whitespace = check_bool(keep_whitespace, "keep_whitespace")
        self.with_offsets = check_bool(with_offsets, "with_offsets")

    @staticmethod
    def _is_space(char):
        return char.isspace() and not "\x1c" <= char <= "\x1f"

    def _spans(self, text):
        spans, start, last = [], 0, None
        for i, char in enumerate(text):
            kind = (script_of(char), self._is_space(char))
            if i > start and kind != last:
                if self.keep_whitespace or not last[1]:
                    spans.append((start, i))
                start = i
            last = kind
        if len(text) > start and (self.keep_whitespace or not last[1]):
            spans.append((start, len(text)))
        return spans

    def __call__(self, text):
        text = scalar_text(text, "UnicodeScriptTokenizerOp")
        spans = self._spans(text)
        return _tokens([text[b:e] for b, e in spans], spans, text, self.with_offsets)


_DIGITS = {str(d): f" {name} " for d, name in enumerate(
    "zero one two three four five six seven eight nine".split())}
_TAG_ON_ONE_LINE = re.compile("<[^\n\x0b\x0c\r\x85\u2028\u2029]*>")


def _clean_wikipedia(text):
    """MindSpore 2.10's FilterWikipediaXML rules for one string."""
    if "#redirect" in text or "#REDIRECT" in text:
        return ""
    text = _TAG_ON_ONE_LINE.sub("", text)
    text = re.sub(r"<[^>]*>", "", text)
    text = re.sub(r"&[^;]*;", " ", text)
    text = ascii_lower(text.replace("R", ""))
    text = "".join(_DIGITS.get(char, char) for char in text)
    return " ".join(re.sub(r"[^a-z]+", " ", text).split())


class FilterWikipediaXML(PyTensorOperation):
    """Clean text of a Wikipedia XML dump to lower-case letters and single spaces, by
    MindSpore 2.10's rules: a text with ``#redirect`` / ``#REDIRECT`` becomes empty; XML
    tags and ``&...;`` entities are removed; digits are spelled out (``"1"`` -> ``"one"``);
    every other character but a-z becomes a space (A-Z lower-cased, except that MindSpore
    drops a capital ``R``). Each string of a tensor is cleaned (MindSpore 2.10 blanks all
    but the first string of a 1-D tensor)."""

    def __call__(self, text):
        arr = np.asarray(text)
        if arr.dtype.kind != "U":
            raise RuntimeError("RegexReplace: input is not of type string.")
        return _map_strings(arr, _clean_wikipedia)

