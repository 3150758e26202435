"""``SentencePieceVocab`` and ``SentencePieceTokenizer`` of ``mindspore.dataset.text``, on the
``sentencepiece`` package (the optional extra ``mscore[text]``; imported only when a model is
trained or loaded).

Training passes MindSpore 2.10's trainer arguments (``vocab_size``, ``character_coverage``,
``model_type``, then ``params`` except those four and ``input`` / ``model_prefix``), so a model
trained on the same text gives the same pieces as MindSpore's.
"""
from __future__ import annotations

import io
import os
import re

import numpy as np

from mscore.dataset.text._checks import check_uint32, scalar_text, type_check
from mscore.dataset.text.utils import SentencePieceModel, SPieceTokenizerOutType
from mscore.dataset.transforms.transforms import PyTensorOperation

__all__ = ["SentencePieceVocab", "SentencePieceTokenizer"]

_RESERVED = ("input", "vocab_size", "model_prefix", "character_coverage", "model_type")


def _sentencepiece():
    try:
        import sentencepiece
    except ImportError:
        raise ImportError("SentencePieceVocab and SentencePieceTokenizer need the sentencepiece "
                          "package: pip install 'mscore[text]' (or pip install sentencepiece)"
                          ) from None
    return sentencepiece


def _check_training(vocab_size, character_coverage, model_type, params):
    check_uint32(vocab_size, "vocab_size")
    if character_coverage is not None:
        type_check(character_coverage, (float,), "character_coverage")
    if model_type is not None:
        type_check(model_type, (str, SentencePieceModel), "model_type")
    if params is not None:
        type_check(params, (dict,), "params")


def _train(vocab_size, character_coverage, model_type, params, **source):
    """The serialized model trained on ``source`` (``input=`` files or
    ``sentence_iterator=``)."""
    spm = _sentencepiece()
    if isinstance(model_type, str):
        model_type = SentencePieceModel[model_type.upper()]
    args = {"vocab_size": vocab_size, "model_prefix": "", "minloglevel": 1,
            "character_coverage": character_coverage,
            "model_type": (model_type or SentencePieceModel.UNIGRAM).name}
    args.update({key: value for key, value in (params or {}).items() if key not in _RESERVED})
    model = io.BytesIO()
    try:
        spm.SentencePieceTrainer.train(model_writer=model, **source, **args)
    except (RuntimeError, OSError, ValueError) as exc:
        # the library's message without its status-code name ("INTERNAL: " / "Internal: "), as
        # MindSpore words it
        message = re.sub(r"^[A-Z][A-Za-z_]*: ", "", str(exc))
        raise RuntimeError(f"SentencePieceVocab: {message}") from None
    return model.getvalue()


class SentencePieceVocab:
    """A trained SentencePiece model: :meth:`from_file` / :meth:`from_dataset` train one,
    :meth:`save_model` writes it, :class:`SentencePieceTokenizer` uses it."""

    def __init__(self):
        self.model_proto = None

    @classmethod
    def from_dataset(cls, dataset, col_names, vocab_size, character_coverage, model_type,
                     params):
        """Train on the strings of the columns ``col_names`` (all columns when ``None``) of
        ``dataset``, one sentence per string."""
        if col_names is not None:
            type_check(col_names, (list,), "col_names")
            for i, name in enumerate(col_names):
                type_check(name, (str,), f"col_names[{i}]")
        if vocab_size is None:
            raise TypeError("vocab_size must be provided.")
        _check_training(vocab_size, character_coverage, model_type, params)
        for name in col_names or []:
            if name not in dataset.get_col_names():
                raise RuntimeError(f"Invalid column, column name: {name} does not exist, "
                                   f"check existed column with dataset API 'get_col_names'")
        vocab = cls()
        vocab.model_proto = _train(vocab_size, character_coverage, model_type, params,
                                   sentence_iterator=_sentences(dataset, col_names))
        return vocab

    @classmethod
    def from_file(cls, file_path, vocab_size, character_coverage, model_type, params):
        """Train on the text files ``file_path`` (a list of paths), one sentence a line."""
        if file_path is not None:
            type_check(file_path, (list,), "file_path")
        _check_training(vocab_size, character_coverage, model_type, params)
        for path in file_path or []:
            if not os.path.isfile(path):
                raise ValueError(f"SentencePieceVocab: \"{path}\": No such file or directory")
        vocab = cls()
        vocab.model_proto = _train(vocab_size, character_coverage, model_type, params,
                                   input=",".join(file_path or []))
        return vocab

    @classmethod
    def save_model(cls, vocab, path, filename):
        """Write the model of ``vocab`` to the file ``filename`` in the folder ``path``."""
        if vocab is not None:
            type_check(vocab, (SentencePieceVocab,), "vocab")
        if path is not None:
            type_check(path, (str,), "path")
        if filename is not None:
            type_check(filename, (str,), "filename")
        if not os.path.isdir(path):
            raise ValueError(f"Get real path failed, path={path}")
        with open(os.path.join(os.path.realpath(path), filename), "wb") as f:
            f.write(vocab.model_proto)


def _sentences(dataset, col_names):
    for row in dataset.create_dict_iterator(num_epochs=1, output_numpy=True):
        for name in (col_names or list(row)):
            values = np.asarray(row[name])
            if values.dtype.kind == "S":
                values = np.char.decode(values, "utf-8")
            yield from (str(value) for value in values.reshape(-1).tolist())


class SentencePieceTokenizer(PyTensorOperation):
    """Tokenize a string with a SentencePiece model: ``mode`` is a
    :class:`SentencePieceVocab` or the path of a saved model; ``out_type`` gives pieces
    (``SPieceTokenizerOutType.STRING``) or their ids (``INT``, int32)."""

    def __init__(self, mode, out_type):
        type_check(mode, (str, SentencePieceVocab),
                   "mode is not an instance of str or text.SentencePieceVocab.")
        type_check(out_type, (SPieceTokenizerOutType,),
                   "out_type is not an instance of SPieceTokenizerOutType")
        self.mode, self.out_type = mode, out_type
        self._processor = None

    def _load(self):
        spm = _sentencepiece()
        if isinstance(self.mode, SentencePieceVocab):
            return spm.SentencePieceProcessor(model_proto=self.mode.model_proto)
        if not os.path.isfile(self.mode):
            raise ValueError(f"The file {self.mode} does not exist.")
        with open(self.mode, "rb") as f:
            proto = f.read()
        processor = spm.SentencePieceProcessor()
        try:
            processor.LoadFromSerializedProto(proto)
        except (RuntimeError, OSError):
            raise ValueError(f"SentencePieceTokenizer: load vocab model file: {self.mode} "
                             f"failed.") from None
        return processor

    def __call__(self, text):
        text = scalar_text(text, "SentencePieceTokenizer")
        if self._processor is None:
            self._processor = self._load()
        if self.out_type == SPieceTokenizerOutType.STRING:
            pieces = self._processor.encode(text, out_type=str)
            return np.array(pieces, dtype=str) if pieces else np.array([], dtype="<U1")
        return np.array(self._processor.encode(text, out_type=int), dtype=np.int32)
