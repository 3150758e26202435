"""``JiebaTokenizer`` of ``mindspore.dataset.text``: Chinese word segmentation as MindSpore's
C++ engine does it with cppjieba, in pure Python, reading the same two files:

* the MP dictionary: UTF-8 lines ``word freq tag``; a word's weight is
  ``log(freq / sum of all freqs)``;
* the HMM model (``hmm_model.utf8``): lines starting with ``#`` and blank lines are comments;
  then the 4 start log-probabilities, 4 lines of the 4x4 transition log-probabilities and
  4 lines of emission log-probabilities (``char:logprob`` pairs separated by commas), for
  the states B(egin), E(nd), M(iddle), S(ingle) in this order.

The text is first cut at spaces, tabs, newlines, ``，`` and ``。`` (each a token of its
own). MP mode segments each piece by the most probable path through the DAG of dictionary
words (an unknown character weighs the smallest word weight); HMM mode tags the characters
B/E/M/S by Viterbi (runs of ASCII letters and digits stay whole); MIX mode runs MP and hands
each run of single characters to HMM.
"""
from __future__ import annotations

import math
import os
import re

import numpy as np

from mscore.dataset.text._checks import check_uint32, scalar_text
from mscore.dataset.text.utils import JiebaMode
from mscore.dataset.transforms.transforms import PyTensorOperation

__all__ = ["JiebaTokenizer"]

_MIN_DOUBLE = -3.14e100
_SEPARATORS = frozenset(" \t\n，。")
_B, _E, _M, _S = range(4)


def _read_lines(path, what):
    try:
        with open(path, "rb") as f:
            return f.read().decode("utf-8").split("\n")
    except OSError as exc:
        raise ValueError(f"JiebaTokenizer: cannot read the {what} {path} ({exc.strerror}).") \
            from None
    except UnicodeDecodeError:
        raise ValueError(f"JiebaTokenizer: the {what} {path} is not UTF-8 text.") from None


def _number(field, path, number, what):
    try:
        return float(field)
    except ValueError:
        raise ValueError(f"JiebaTokenizer: invalid {what} {path}, line {number}: {field!r} "
                         f"is not a number.") from None


def _load_dictionary(path):
    """``{word: freq}`` of an MP dictionary file (a later line of a word wins)."""
    freqs = {}
    for number, line in enumerate(_read_lines(path, "MP dictionary"), start=1):
        line = line.rstrip("\r")
        if not line:
            continue
        fields = line.split(" ")
        if len(fields) != 3 or not fields[0]:
            raise ValueError(f"JiebaTokenizer: invalid MP dictionary {path}, line {number}: "
                             f"expected 'word freq tag', got {line!r}.")
        freqs[fields[0]] = _number(fields[1], path, number, "MP dictionary")
    if not freqs or sum(freqs.values()) <= 0:
        raise ValueError(f"JiebaTokenizer: the MP dictionary {path} has no word with a "
                         f"positive frequency.")
    return freqs


def _load_hmm(path):
    """``(start[4], trans[4][4], emit[4]{char: logprob})`` of an HMM model file."""
    lines = [(number, line.strip()) for number, line in
             enumerate(_read_lines(path, "HMM model"), start=1)]
    lines = [(number, line) for number, line in lines if line and not line.startswith("#")]
    if len(lines) < 9:
        raise ValueError(f"JiebaTokenizer: invalid HMM model {path}: expected 9 lines (start "
                         f"probabilities, 4 transition rows, 4 emission rows), got "
                         f"{len(lines)}.")
    rows = []
    for number, line in lines[:5]:
        fields = line.split(" ")
        if len(fields) != 4:
            raise ValueError(f"JiebaTokenizer: invalid HMM model {path}, line {number}: "
                             f"expected 4 numbers, got {line!r}.")
        rows.append([_number(f, path, number, "HMM model") for f in fields])
    emit = []
    for number, line in lines[5:9]:
        probs = {}
        for item in line.split(","):
            parts = item.split(":")
            if len(parts) != 2 or len(parts[0]) != 1:
                raise ValueError(f"JiebaTokenizer: invalid HMM model {path}, line {number}: "
                                 f"expected 'char:logprob' items, got {item!r}.")
            probs[parts[0]] = _number(parts[1], path, number, "HMM model")
        emit.append(probs)
    return rows[0], rows[1:], emit


class _Dictionary:
    """Word weights (log-probabilities) in a prefix table, as cppjieba's DictTrie."""

    def __init__(self, freqs):
        self.total = sum(freqs.values())
        self.weights = {word: math.log(freq / self.total) for word, freq in freqs.items()}
        ordered = sorted(self.weights.values())
        self.min_weight, self.user_weight = ordered[0], ordered[len(ordered) // 2]
        self.prefixes = set()
        for word in self.weights:
            self._add_prefixes(word)

    def _add_prefixes(self, word):
        for end in range(1, len(word) + 1):
            self.prefixes.add(word[:end])

    def add_user_word(self, word, freq):
        self.weights[word] = math.log(freq / self.total) if freq else self.user_weight
        self._add_prefixes(word)

    def _nexts(self, text, i):
        """``(end, weight or None)`` of the dictionary words starting at ``i``: the
        character alone first, then the longer words."""
        nexts = [(i + 1, self.weights.get(text[i]))]
        for end in range(i + 2, len(text) + 1):
            if text[i:end] not in self.prefixes:
                break
            if text[i:end] in self.weights:
                nexts.append((end, self.weights[text[i:end]]))
        return nexts

    def cut(self, text):
        """The most probable segmentation of ``text`` as (begin, end) character spans."""
        best = [(0.0, None)] * (len(text) + 1)
        for i in range(len(text) - 1, -1, -1):
            score, choice = _MIN_DOUBLE, None
            for end, weight in self._nexts(text, i):
                value = best[end][0] + (self.min_weight if weight is None else weight)
                if value > score:
                    score, choice = value, end
            best[i] = (score, choice)
        spans, i = [], 0
        while i < len(text):
            spans.append((i, best[i][1]))
            i = best[i][1]
        return spans


class _HiddenMarkovModel:
    """cppjieba's HMM segmentation: ASCII letter/digit runs whole, the rest by Viterbi."""

    def __init__(self, start, trans, emit):
        self.start, self.trans, self.emit = start, trans, emit

    def _viterbi(self, text):
        weight = [[self.start[y] + self.emit[y].get(text[0], _MIN_DOUBLE) for y in range(4)]]
        path = [[-1] * 4]
        for char in text[1:]:
            row, back = [], []
            for y in range(4):
                emit = self.emit[y].get(char, _MIN_DOUBLE)
                best, arg = _MIN_DOUBLE, _E
                for previous in range(4):
                    value = weight[-1][previous] + self.trans[previous][y] + emit
                    if value > best:
                        best, arg = value, previous
                row.append(best)
                back.append(arg)
            weight.append(row)
            path.append(back)
        state = _E if weight[-1][_E] >= weight[-1][_S] else _S
        states = []
        for x in range(len(text) - 1, -1, -1):
            states.append(state)
            state = path[x][state]
        return states[::-1]

    def _tagged(self, text, offset):
        spans, left = [], 0
        for i, state in enumerate(self._viterbi(text)):
            if state in (_E, _S):
                spans.append((offset + left, offset + i + 1))
                left = i + 1
        return spans

    def cut(self, text, offset=0):
        """The segmentation of ``text`` as (begin, end) spans shifted by ``offset``."""
        spans, left, i = [], 0, 0
        while i < len(text):
            if ord(text[i]) >= 0x80:
                i += 1
                continue
            if left < i:
                spans += self._tagged(text[left:i], offset + left)
            run = (_LETTERS.match(text, i) or _NUMBER.match(text, i))
            end = run.end() if run else i + 1
            spans.append((offset + i, offset + end))
            left = i = end
        if left < len(text):
            spans += self._tagged(text[left:], offset + left)
        return spans


_LETTERS = re.compile(r"[A-Za-z][A-Za-z0-9]*")
_NUMBER = re.compile(r"[0-9][0-9.]*")


def _pieces(text):
    """``text`` cut at cppjieba's separators, each separator a piece: (begin, end) spans."""
    spans, start = [], 0
    for i, char in enumerate(text):
        if char in _SEPARATORS:
            if start < i:
                spans.append((start, i))
            spans.append((i, i + 1))
            start = i + 1
    if start < len(text):
        spans.append((start, len(text)))
    return spans


class JiebaTokenizer(PyTensorOperation):
    """Segment Chinese text with the HMM model file ``hmm_path`` and the MP dictionary
    ``mp_path`` (cppjieba's formats, see the module) in ``mode`` (:class:`JiebaMode`: MIX,
    MP or HMM); ``with_offsets`` adds the UTF-8 byte offsets of the words. :meth:`add_word`
    and :meth:`add_dict` add user words."""

    def __init__(self, hmm_path, mp_path, mode=JiebaMode.MIX, with_offsets=False):
        for path, name, what in ((hmm_path, "hmm_path", "HMMSegment"),
                                 (mp_path, "mp_path", "MPSegment")):
            if path is None:
                raise ValueError(f"The dict of {what} in cppjieba is not provided.")
            if not isinstance(path, str):
                raise TypeError(f"Wrong input type for {name}, should be string.")
        if not isinstance(with_offsets, bool):
            raise TypeError("Wrong input type for with_offsets, should be boolean.")
        if not isinstance(mode, JiebaMode):
            raise TypeError("Wrong input type for mode, should be JiebaMode.")
        for path in (hmm_path, mp_path):
            if not os.path.exists(os.path.realpath(path)):
                raise ValueError(f" jieba mode file {path} is not exist.")
        self.mode, self.hmm_path, self.mp_path = mode, hmm_path, mp_path
        self.with_offsets = with_offsets
        self._hmm = _HiddenMarkovModel(*_load_hmm(hmm_path))
        self._dictionary = _Dictionary(_load_dictionary(mp_path))

    def add_word(self, word, freq=None):
        """Add ``word`` to the dictionary with frequency ``freq`` (``None`` or 0: the median
        weight of the dictionary's words)."""
        if word is None:
            raise ValueError("word is not provided.")
        if not isinstance(word, str) or not word:
            raise TypeError(f"word: expected a non-empty str, got {word!r}")
        if freq is not None:
            check_uint32(freq)
        self._dictionary.add_user_word(word, freq or 0)

    def add_dict(self, user_dict):
        """Add the words of ``user_dict``: a ``{word: freq}`` dict, or the path of a UTF-8
        file of ``word [freq]`` lines (other lines are ignored)."""
        if isinstance(user_dict, str):
            for word, freq in self._user_file(user_dict):
                self.add_word(word, int(freq) if freq is not None else 0)
        elif isinstance(user_dict, dict):
            for word, freq in user_dict.items():
                self.add_word(word, freq)
        else:
            raise TypeError("The type of user_dict must str or dict.")

    @staticmethod
    def _user_file(path):
        if not os.path.exists(path):
            raise ValueError(f"user dict file {path} is not exist.")
        line_format = re.compile(r"^\s*([^\s*]+?)\s*([0-9]+)?\s*$")
        lines = _read_lines(os.path.realpath(path), "user dictionary")
        return [found.groups() for found in map(line_format.match, (
            line.strip() for line in lines)) if found]

    def _spans(self, text):
        spans = []
        for begin, end in _pieces(text):
            piece = text[begin:end]
            if self.mode == JiebaMode.HMM:
                spans += self._hmm.cut(piece, begin)
                continue
            words = [(begin + b, begin + e) for b, e in self._dictionary.cut(piece)]
            if self.mode == JiebaMode.MP:
                spans += words
            else:
                spans += self._mixed(text, words)
        return spans

    def _mixed(self, text, words):
        """MP words, each run of lone characters cut again by the HMM (MindSpore adds its
        user words to cppjieba without marking the single-character ones, so those are cut
        again too)."""
        spans, run = [], []
        for begin, end in words + [(None, None)]:
            if begin is not None and end - begin == 1:
                run.append(begin)
                continue
            if run:
                spans += self._hmm.cut(text[run[0]:run[-1] + 1], run[0])
                run = []
            if begin is not None:
                spans.append((begin, end))
        return spans

    def __call__(self, text):
        text = scalar_text(text, "JiebaTokenizerOp")
        spans = self._spans(text) if text else []
        tokens = [text[b:e] for b, e in spans] or [""]  # no offsets then, as in MindSpore
        out = np.array(tokens, dtype=str)
        if not self.with_offsets:
            return out
        byte_at = np.cumsum([0] + [len(ch.encode("utf-8")) for ch in text])
        return (out, np.array([byte_at[b] for b, _ in spans], np.uint32),
                np.array([byte_at[e] for _, e in spans], np.uint32))
