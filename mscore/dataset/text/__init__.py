"""Text transforms and vocabularies for the dataset pipeline (MindSpore's
``mindspore.dataset.text``).

>>> vocab = text.Vocab.from_list(["the", "cat"], special_tokens=["<pad>", "<unk>"])
>>> data = data.map([text.WhitespaceTokenizer(), text.Lookup(vocab, "<unk>")], "text")

Present: the tokenizers that need no native library, ``Vocab``, ``Lookup``, ``ToNumber``,
the sequence edits and the enumerations. Absent, each with its reason in :data:`ABSENT`:
the tokenizers and vectors that rest on native libraries or downloaded model files.
"""
from mscore.dataset.text.transforms import (
    AddToken, CaseFold, Lookup, Ngram, NormalizeUTF8, PythonTokenizer, RegexReplace,
    RegexTokenizer, SlidingWindow, ToNumber, Truncate, TruncateSequencePair,
    UnicodeCharTokenizer, WhitespaceTokenizer)
from mscore.dataset.text.utils import (
    JiebaMode, NormalizeForm, SentencePieceModel, SPieceTokenizerLoadType,
    SPieceTokenizerOutType, Vocab, to_bytes, to_str)

__all__ = ["AddToken", "CaseFold", "Lookup", "Ngram", "NormalizeUTF8", "PythonTokenizer",
           "RegexReplace", "RegexTokenizer", "SlidingWindow", "ToNumber", "Truncate",
           "TruncateSequencePair", "UnicodeCharTokenizer", "WhitespaceTokenizer", "JiebaMode",
           "NormalizeForm", "SentencePieceModel", "SPieceTokenizerLoadType",
           "SPieceTokenizerOutType", "Vocab", "to_bytes", "to_str"]

_ICU = ("rests on ICU's Unicode script and normalization tables in MindSpore's C++ "
        "engine; compose NormalizeUTF8, CaseFold and RegexTokenizer, or use PythonTokenizer")
_VECTORS = ("pretrained word vectors read from downloaded files: load the vectors with "
            "numpy and map tokens with Vocab/Lookup and an Embedding layer")
_SPIECE = ("needs the native sentencepiece library and its trained model files; tokenize "
           "with PythonTokenizer around the sentencepiece package")

ABSENT = {
    "BasicTokenizer": _ICU,
    "BertTokenizer": _ICU,
    "WordpieceTokenizer": "goes with BertTokenizer (" + _ICU + ")",
    "UnicodeScriptTokenizer": _ICU,
    "JiebaTokenizer": ("needs the jieba dictionaries (HMM and MP model files) of MindSpore's "
                       "C++ engine; wrap the jieba package in PythonTokenizer"),
    "SentencePieceTokenizer": _SPIECE,
    "SentencePieceVocab": _SPIECE,
    "FilterWikipediaXML": "Wikipedia dump cleaning, a corpus-preparation step, not training",
    "Vectors": _VECTORS,
    "FastText": _VECTORS,
    "GloVe": _VECTORS,
    "CharNGram": _VECTORS,
    "ToVectors": _VECTORS,
}


def __getattr__(name):
    if name in ABSENT:
        raise AttributeError(f"mscore.dataset.text.{name} is not provided: {ABSENT[name]}")
    raise AttributeError(f"module 'mscore.dataset.text' has no attribute {name!r}")
