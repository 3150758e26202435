"""``dataset.text`` cases run unchanged on MindSpore 2.10 and on mscore.

Each ``case_*`` takes the framework's top-level module and returns a JSON-able answer
(numpy results as ``{"dtype": kind, "value": list}``; an exception as its type and message).
``make_text_oracle.py`` records MindSpore's answers into ``mindspore_text_oracle.json``;
``tests/test_dataset_text.py`` runs the cases on mscore and compares.
"""
import os
import tempfile

import numpy as np


def attempt(fn):
    """``fn()``'s value, or the type and message of what it raised."""
    try:
        return fn()
    except Exception as exc:  # the type and message are the observation
        return {"raises": type(exc).__name__, "message": str(exc)}


def out(value):
    """A JSON-able form of a transform's result (arrays keep their dtype kind)."""
    if isinstance(value, (tuple, list)):
        return [out(v) for v in value]
    if isinstance(value, np.ndarray):
        kind = {"U": "str", "S": "bytes", "i": "int", "u": "uint", "f": "float",
                "b": "bool"}[value.dtype.kind]
        data = value.tolist()
        if kind == "bytes":
            data = np.vectorize(lambda b: b.decode("utf-8"))(value).tolist() if value.size \
                else []
        return {"dtype": f"{kind}{value.dtype.itemsize * 8}" if kind in "intuintfloat"
                else kind, "value": data}
    if isinstance(value, dict):
        return {str(k): out(v) for k, v in sorted(value.items())}
    return value


def _words():
    return ["the", "cat", "sat", "on", "the", "mat", "the", "cat"]


def case_vocab_from_list(ms):
    text = ms.dataset.text
    vocab = text.Vocab.from_list(["a", "b", "c"], ["<pad>", "<unk>"], True)
    return {"vocab": out(vocab.vocab()), "b": vocab.tokens_to_ids("b"),
            "ids": vocab.tokens_to_ids(["a", "zz", "<unk>"]),
            "token": vocab.ids_to_tokens(3), "tokens": vocab.ids_to_tokens([0, 4, 99])}


def case_vocab_from_list_special_last(ms):
    vocab = ms.dataset.text.Vocab.from_list(["x", "y"], ["<pad>"], special_first=False)
    return out(vocab.vocab())


def case_vocab_from_list_duplicate(ms):
    ms.dataset.text.Vocab.from_list(["x", "x"])
    return "ok"


def case_vocab_from_dict(ms):
    vocab = ms.dataset.text.Vocab.from_dict({"a": 0, "b": 5})
    return {"vocab": out(vocab.vocab()), "ids": vocab.tokens_to_ids(["b", "q"])}


def case_vocab_from_file(ms):
    folder = tempfile.mkdtemp(prefix="vocab_")
    path = os.path.join(folder, "vocab.txt")
    with open(path, "w") as f:
        f.write("apple,1\nbanana,2\ncherry,3\ndate,4\n")
    vocab = ms.dataset.text.Vocab.from_file(path, ",", vocab_size=3, special_tokens=["<unk>"])
    return out(vocab.vocab())


def case_vocab_from_dataset(ms):
    def rows():
        for sentence in ("the cat sat", "on the mat", "the cat ran", "a b"):
            yield (np.array(sentence.split()),)
    data = ms.dataset.GeneratorDataset(rows, column_names=["text"], shuffle=False)
    vocab = ms.dataset.text.Vocab.from_dataset(data, columns=["text"],
                                               special_tokens=["<pad>", "<unk>"])
    top = ms.dataset.text.Vocab.from_dataset(data, columns="text", freq_range=(1, 3),
                                             top_k=3)
    return {"all": out(vocab.vocab()), "top": out(top.vocab())}


def case_lookup(ms):
    text = ms.dataset.text
    vocab = text.Vocab.from_list(["a", "b", "c"], ["<pad>", "<unk>"])
    return {"int32": out(text.Lookup(vocab, "<unk>")(np.array(["a", "zz", "c"]))),
            "int64": out(text.Lookup(vocab, "<unk>", ms.int64)(np.array(["b"]))),
            "scalar": out(text.Lookup(vocab, "<unk>")("c"))}


def case_lookup_unknown_without_token(ms):
    text = ms.dataset.text
    vocab = text.Vocab.from_list(["a"])
    return out(text.Lookup(vocab)(np.array(["zz"])))


def case_lookup_unknown_token_not_in_vocab(ms):
    text = ms.dataset.text
    text.Lookup(text.Vocab.from_list(["a"]), "<unk>")(np.array(["a"]))
    return "ok"


def case_to_number(ms):
    to_number = ms.dataset.text.ToNumber
    return {"int32": out(to_number(ms.int32)(np.array(["1", "-2", "30"]))),
            "float32": out(to_number(ms.float32)(np.array(["1.5", "2"]))),
            "uint8": out(to_number(ms.uint8)(np.array(["255"])))}


def case_to_number_bad(ms):
    return out(ms.dataset.text.ToNumber(ms.int32)(np.array(["abc"])))


def case_to_number_overflow(ms):
    return out(ms.dataset.text.ToNumber(ms.int8)(np.array(["300"])))


def case_whitespace_tokenizer(ms):
    text = ms.dataset.text
    return {"plain": out(text.WhitespaceTokenizer()("hello  world\tx\ny ")),
            "offsets": out(text.WhitespaceTokenizer(True)("héllo world"))}


def case_unicode_char_tokenizer(ms):
    text = ms.dataset.text
    return {"plain": out(text.UnicodeCharTokenizer()("héy!")),
            "offsets": out(text.UnicodeCharTokenizer(with_offsets=True)("hé y"))}


def case_sliding_window(ms):
    window = ms.dataset.text.SlidingWindow
    return {"ints": out(window(2)(np.array([1, 2, 3, 4]))),
            "strs": out(window(3)(np.array(["a", "b", "c", "d"]))),
            "too_wide": out(window(5)(np.array([1, 2, 3])))}


def case_sliding_window_bad_width(ms):
    ms.dataset.text.SlidingWindow(0)
    return "ok"


def case_ngram(ms):
    ngram = ms.dataset.text.Ngram
    words = np.array(["a", "b", "c"])
    return {"bigram": out(ngram(2)(words)),
            "mixed": out(ngram([1, 2], left_pad=("_", 1), right_pad=("-", 1),
                               separator="|")(words)),
            "too_long": out(ngram(4)(words))}


def case_truncate(ms):
    truncate = ms.dataset.text.Truncate
    return {"ints": out(truncate(2)(np.array([1, 2, 3]))),
            "strs": out(truncate(5)(np.array(["a", "b"])))}


def case_truncate_sequence_pair(ms):
    pair = ms.dataset.text.TruncateSequencePair
    return {"both": out(pair(4)(np.array([1, 2, 3]), np.array([4, 5, 6]))),
            "uneven": out(pair(4)(np.array([1]), np.array([4, 5, 6, 7, 8])))}


def case_add_token(ms):
    add = ms.dataset.text.AddToken
    words = np.array(["a", "b"])
    return {"begin": out(add("<s>", True)(words)), "end": out(add("</s>", False)(words))}


def case_case_fold(ms):
    return out(ms.dataset.text.CaseFold()(np.array(["HeLLo", "ÄB"])))


def case_case_fold_compatibility(ms):
    return out(ms.dataset.text.CaseFold()("ｆｕｌｌ①ﬁ\u200bX\u00adİß…Å"))


def case_tokenizers_on_empty_text(ms):
    text = ms.dataset.text
    return {"whitespace": out(text.WhitespaceTokenizer(True)("")),
            "whitespace_blank": out(text.WhitespaceTokenizer()("   ")),
            "regex": out(text.RegexTokenizer(",", with_offsets=True)("")),
            "unicode_char": out(text.UnicodeCharTokenizer(True)(""))}


def case_regex_replace(ms):
    replace = ms.dataset.text.RegexReplace
    return {"all": out(replace(r"\s+", "_")("a  b c")),
            "first": out(replace(r"\s+", "_", replace_all=False)("a  b c"))}


def case_regex_tokenizer(ms):
    tokenizer = ms.dataset.text.RegexTokenizer
    return {"plain": out(tokenizer(r"\s+")("a b  c")),
            "keep": out(tokenizer(r"\s+", r"\s+")("a b  c")),
            "offsets": out(tokenizer(r",", with_offsets=True)("ab,c"))}


def case_python_tokenizer(ms):
    return out(ms.dataset.text.PythonTokenizer(lambda s: s.split("-"))(np.array("a-b-c")))


def case_python_tokenizer_str_input(ms):
    return out(ms.dataset.text.PythonTokenizer(lambda s: s.split("-"))("a-b-c"))


def case_normalize_utf8(ms):
    text = ms.dataset.text
    return {form: out(text.NormalizeUTF8(getattr(text.NormalizeForm, form))("ｆｕｌｌ é"))
            for form in ("NFC", "NFKC", "NFD", "NFKD")}


def case_to_str_to_bytes(ms):
    text = ms.dataset.text
    return {"str": out(text.to_str(np.array([b"a", b"bc"]))),
            "bytes": out(text.to_bytes(np.array(["x", "yz"])))}


def case_pipeline(ms):
    text = ms.dataset.text
    sentences = ["the cat sat", "on the mat", "the cat ran away fast"]

    def rows():
        for sentence in sentences:
            yield (np.array(sentence),)
    data = ms.dataset.GeneratorDataset(rows, column_names=["text"], shuffle=False)
    data = data.map(text.WhitespaceTokenizer(), "text")
    vocab = text.Vocab.from_dataset(data, "text", special_tokens=["<pad>", "<unk>"])
    data = data.map(text.Lookup(vocab, "<unk>"), "text")
    data = data.map(ms.dataset.transforms.PadEnd([4], 0), "text")
    data = data.batch(2)
    return [out(row["text"]) for row in data.create_dict_iterator(output_numpy=True)]


CASES = {name[len("case_"):]: fn for name, fn in sorted(globals().items())
         if name.startswith("case_")}
