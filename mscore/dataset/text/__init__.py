"""Text transforms and vocabularies for the dataset pipeline (MindSpore's
``mindspore.dataset.text``).

>>> vocab = text.Vocab.from_list(["the", "cat"], special_tokens=["<pad>", "<unk>"])
>>> data = data.map([text.WhitespaceTokenizer(), text.Lookup(vocab, "<unk>")], "text")

Present: the tokenizers (the ICU-based ones on Python's ``unicodedata`` and ``re``),
``Vocab``, ``Lookup``, ``ToNumber``, the sequence edits, word vectors and ``ToVectors``,
``FilterWikipediaXML``, ``JiebaTokenizer``, the SentencePiece vocabulary and tokenizer (with
the optional ``sentencepiece`` package: ``pip install 'mscore[text]'``) and the enumerations.
:data:`ABSENT` would name what is left out, with the reason (nothing is).
"""
from mscore.dataset.text.jieba import JiebaTokenizer
from mscore.dataset.text.spiece import SentencePieceTokenizer, SentencePieceVocab
from mscore.dataset.text.tokenizers import (
    BasicTokenizer, BertTokenizer, FilterWikipediaXML, UnicodeScriptTokenizer,
    WordpieceTokenizer)
from mscore.dataset.text.transforms import (
    AddToken, CaseFold, Lookup, Ngram, NormalizeUTF8, PythonTokenizer, RegexReplace,
    RegexTokenizer, SlidingWindow, ToNumber, Truncate, TruncateSequencePair,
    UnicodeCharTokenizer, WhitespaceTokenizer)
from mscore.dataset.text.utils import (
    JiebaMode, NormalizeForm, SentencePieceModel, SPieceTokenizerLoadType,
    SPieceTokenizerOutType, Vocab, to_bytes, to_str)
from mscore.dataset.text.vectors import CharNGram, FastText, GloVe, ToVectors, Vectors

__all__ = ["AddToken", "CaseFold", "Lookup", "Ngram", "NormalizeUTF8", "PythonTokenizer",
           "RegexReplace", "RegexTokenizer", "SlidingWindow", "ToNumber", "Truncate",
           "TruncateSequencePair", "UnicodeCharTokenizer", "WhitespaceTokenizer",
           "BasicTokenizer", "BertTokenizer", "WordpieceTokenizer", "UnicodeScriptTokenizer",
           "FilterWikipediaXML", "JiebaTokenizer", "Vectors", "GloVe", "FastText",
           "CharNGram", "ToVectors", "SentencePieceVocab", "SentencePieceTokenizer",
           "JiebaMode", "NormalizeForm", "SentencePieceModel", "SPieceTokenizerLoadType",
           "SPieceTokenizerOutType", "Vocab", "to_bytes", "to_str"]

ABSENT = {}


def __getattr__(name):
    if name in ABSENT:
        raise AttributeError(f"mscore.dataset.text.{name} is not provided: {ABSENT[name]}")
    raise AttributeError(f"module 'mscore.dataset.text' has no attribute {name!r}")
