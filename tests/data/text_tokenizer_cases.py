"""``dataset.text`` word vectors, ICU-style tokenizers, FilterWikipediaXML and Jieba cases run
unchanged on MindSpore 2.10 and on mscore (see ``text_cases.py`` for the conventions).

File paths in answers are shown as ``<dir>/NAME``. Cases named ``file_error_*`` observe a bad
file: MindSpore raises ``RuntimeError``, mscore a ``ValueError`` whose message starts with
MindSpore's words (the test compares them so).
"""
import os
import tempfile

import numpy as np
from text_cases import out

CORPUS = [
    "Hello, World! I'm here.", "Héllo Wörld ÅNGSTRÖM café", "北京欢迎你 hello世界",
    "[CLS] Hello [SEP] [UNK][PAD] [MASK] [unused12] [cls] [unused]", "ab [CLS] cd [SEP] ef",
    "tab\there\nnew\x00ctl\u200bzw", "ｆｕｌｌ width ①②", "a  b   c ",
    "$100 + 5% = #tag @me ~x `q` ^", "İstanbul ß ﬁ", "«quote» — dash… 「日本」", "", "   ",
    "e\u0301 combining", "Привет, мир! مرحبا", "x[CLS]Y", "[[CLS]] [unused3] A",
    "nbsp\u00a0here\u3000ideographic",
]


def _folder():
    return tempfile.mkdtemp(prefix="text_files_")


def _write(folder, name, content):
    path = os.path.join(folder, name)
    with open(path, "w", encoding="utf-8") as f:
        f.write(content)
    return path


def _hide(folder, answer):
    """``answer`` with ``folder`` shown as ``<dir>`` in messages."""
    if isinstance(answer, dict) and "message" in answer:
        return dict(answer, message=answer["message"].replace(folder, "<dir>"))
    return answer


def _try(folder, fn):
    try:
        return fn()
    except Exception as exc:  # the type and message are the observation
        return _hide(folder, {"raises": type(exc).__name__, "message": str(exc)})


# -- word vectors ------------------------------------------------------------------------------
def case_vectors_lookup(ms):
    text = ms.dataset.text
    path = _write(_folder(), "vectors.txt", "ok 0.1 0.2 0.3\nHello 1 2 3\nhello 4 5 6\n"
                                            "ok 7 7 7\n")
    vectors = text.Vectors.from_file(path)
    return {"plain": out(text.ToVectors(vectors)(["ok", "Hello", "HELLO", "zz"])),
            "scalar": out(text.ToVectors(vectors)("ok")),
            "lower": out(text.ToVectors(vectors, lower_case_backup=True)(["HELLO", "Hello",
                                                                          "xx"])),
            "unk": out(text.ToVectors(vectors, unk_init=[9, 8, 7.5])(["xx", "ok"])),
            "unk_tuple": out(text.ToVectors(vectors, unk_init=(0.5, -1, 2))(["q"])),
            "two_d": out(text.ToVectors(vectors)(np.array([["ok", "xx"], ["Hello", "ok"]]))),
            "array_scalar": out(text.ToVectors(vectors)(np.array("Hello")))}


def case_vectors_file_layouts(ms):
    text, folder = ms.dataset.text, _folder()

    def look(name, content, tokens, **kwargs):
        path = _write(folder, name, content)
        return _try(folder, lambda: out(text.ToVectors(text.Vectors.from_file(
            path, **kwargs))(tokens)))
    return {"header": look("h.txt", "3 3\nok 0.1 0.2 0.3\nHello 1 2 3\n", ["ok", "3"]),
            "crlf": look("c.txt", "a 1 2\r\nb 3 4\r\n", ["a", "b"]),
            "no_final_newline": look("n.txt", "a 1 2\nb 3 4", ["a", "b"]),
            "exponents": look("e.txt", "a 1e2 -0\nb -inf inf\n", ["a", "b"]),
            "nan": _try(folder, lambda: out(np.isnan(text.ToVectors(text.Vectors.from_file(
                _write(folder, "nan.txt", "a nan 1\n")))(["a"])))),
            "unicode": look("u.txt", "héllo 1 2\n北京 3 4\n", ["héllo", "北京", "HÉLLO"],
                            ),
            "max_vectors": look("m.txt", "a 1 2\nb 3 4\nc 5 6\n", ["a", "b", "c"],
                                max_vectors=2),
            "max_vectors_zero": look("z.txt", "a 1 2\nb 3 4\n", ["a", "b"], max_vectors=0),
            "max_vectors_after_header": look("mh.txt", "3 2\na 1 2\nb 3 4\nc 5 6\n",
                                             ["a", "b"], max_vectors=1),
            "empty_token": look("et.txt", "a 1 2\n", ["", "a"])}


def case_file_error_vectors(ms):
    text, folder = ms.dataset.text, _folder()

    def load(name, content):
        path = _write(folder, name, content)
        return _try(folder, lambda: text.Vectors.from_file(path) and "ok")
    return {"dims": load("d.txt", "ok 0.1 0.2 0.3\nHello 1 2\n"),
            "empty": load("e.txt", ""),
            "only_headers": load("h.txt", "a 1\nb 2\n"),
            "token_only": load("t.txt", "ok\n"),
            "blank_line": load("b.txt", "a 1 2\n\nb 3 4\n"),
            "tabs": load("tab.txt", "a\t1\t2\n"),
            "double_space": load("s.txt", "a  1   2 \nb 3 4\n"),
            "missing": _try(folder, lambda: text.Vectors.from_file(
                os.path.join(folder, "nope.txt")) and "ok")}


def case_vectors_argument_errors(ms):
    text, folder = ms.dataset.text, _folder()
    path = _write(folder, "v.txt", "a 1 2\n")
    vectors = text.Vectors.from_file(path)

    def named(answer):  # the class of the vectors argument differs by framework
        if isinstance(answer, dict):
            for full in ("mindspore._c_dataengine.Vectors", "mscore.dataset.text.vectors.Vectors"):
                answer["message"] = answer["message"].replace(full, "Vectors")
        return answer
    return {"max_negative": _try(folder, lambda: text.Vectors.from_file(path, max_vectors=-1)),
            "max_bool": _try(folder, lambda: text.Vectors.from_file(path, max_vectors=True)),
            "max_float": _try(folder, lambda: text.Vectors.from_file(path, max_vectors=1.0)),
            "path_int": _try(folder, lambda: text.Vectors.from_file(3)),
            "bad_name": _try(folder, lambda: text.Vectors.from_file(folder + "/a b?.txt")),
            "space_name": _try(folder, lambda: text.Vectors.from_file(folder + "/ ab.txt")),
            "unk_item": _try(folder, lambda: text.ToVectors(vectors, unk_init=[1, "x"])),
            "unk_type": _try(folder, lambda: text.ToVectors(vectors, unk_init=5)),
            "unk_bool": _try(folder, lambda: text.ToVectors(vectors, unk_init=[True, 1])),
            "lower_int": _try(folder, lambda: text.ToVectors(vectors, lower_case_backup=1)),
            "vectors_str": named(_try(folder, lambda: text.ToVectors("x"))),
            "unk_length": _try(folder, lambda: text.ToVectors(vectors, unk_init=[1])(["a"])),
            "int_input": _try(folder, lambda: text.ToVectors(vectors)(np.array([1, 2])))}


def case_glove_fasttext_names(ms):
    text, folder = ms.dataset.text, _folder()

    def load(cls, name):
        path = _write(folder, name, "2 2\na 1 2\nb 3 4\n")
        return _try(folder, lambda: out(text.ToVectors(getattr(text, cls).from_file(path))(
            ["a", "c"])))
    answers = {f"glove {name}": load("GloVe", name) for name in (
        "glove.6B.50d.txt", "glove.6B..txt", "glove.6B.x.txt")}
    answers.update({f"fasttext {name}": load("FastText", name) for name in (
        "wiki.en.vec", "a.vec", "vec", "a.b.vec")})
    return answers


def case_file_error_glove_fasttext(ms):
    text, folder = ms.dataset.text, _folder()

    def load(cls, name, create=True):
        path = _write(folder, name, "a 1 2\n") if create else os.path.join(folder, name)
        return _try(folder, lambda: getattr(text, cls).from_file(path) and "ok")
    answers = {f"glove {name}": load("GloVe", name) for name in (
        "glove.txt", "glove.6B.txt", "glove.840B.300d.txt", "glove.6B.a.b.txt",
        "xglove.6B.5d.txt", "glove.6B.5d.TXT")}
    answers.update({f"fasttext {name}": load("FastText", name) for name in (
        "x.txt", "xvec", "a.vecx", "a.VEC")})
    answers["glove missing"] = load("GloVe", "glove.6B.9d.txt", create=False)
    answers["fasttext missing"] = load("FastText", "zz.vec", create=False)
    answers["charngram missing"] = load("CharNGram", "cng.txt", create=False)
    answers["glove empty"] = _try(folder, lambda: text.GloVe.from_file(
        _write(folder, "glove.6B.1d.txt", "")) and "ok")
    return answers


def case_charngram(ms):
    text, folder = ms.dataset.text, _folder()
    path = _write(folder, "charngram.txt",
                  "2gram-#BEGIN#a 1 0\n2gram-ab 0 2\n3gram-#BEGIN#ab 4 4\n1gram-a 9 9\nab 7 7\n"
                  "4gram-abc#END# 8 0\n2gram-Ab 5 5\n2gram-é 1 0\n3gram-#BEGIN#é 0 2\n")
    vectors = text.CharNGram.from_file(path)
    return {"plain": out(text.ToVectors(vectors)(["a", "ab", "abc", "<unk>", "AB", "Ab", "x",
                                                  "é"])),
            "lower": out(text.ToVectors(vectors, lower_case_backup=True, unk_init=[5, 5])(
                ["AB", "Ab", "x", "<unk>"])),
            "max_vectors": out(text.ToVectors(text.CharNGram.from_file(path, max_vectors=2))(
                ["ab"]))}


# -- tokenizers ------------------------------------------------------------------------------
def case_basic_tokenizer(ms):
    text = ms.dataset.text
    answers = {}
    for lower in (False, True):
        for keep in (False, True):
            for preserve in (True, False):
                op = text.BasicTokenizer(lower_case=lower, keep_whitespace=keep,
                                         preserve_unused_token=preserve, with_offsets=True)
                answers[f"lower={lower} keep={keep} preserve={preserve}"] = [
                    out(op(s)) for s in CORPUS]
    answers["plain"] = out(text.BasicTokenizer()("Welcome     To   BeiJing!"))
    return answers


def case_basic_tokenizer_forms(ms):
    text = ms.dataset.text
    answers = {}
    for form in ("NFC", "NFKC", "NFD", "NFKD"):
        for lower in (False, True):
            op = text.BasicTokenizer(lower_case=lower, with_offsets=True,
                                     normalization_form=getattr(text.NormalizeForm, form))
            answers[f"{form} lower={lower}"] = [out(op(s)) for s in (
                "ｆｕｌｌ width ①②", "Héllo e\u0301 ﬁ")]
    return answers


def case_basic_tokenizer_errors(ms):
    text = ms.dataset.text
    return {"one_d": attempt_out(lambda: text.BasicTokenizer()(np.array(["a b", "c d"]))),
            "int_scalar": attempt_out(lambda: text.BasicTokenizer()(np.array(1))),
            "bytes": attempt_out(lambda: text.BasicTokenizer()(b"a b")),
            "lower_case": attempt_out(lambda: text.BasicTokenizer(lower_case=1)),
            "form": attempt_out(lambda: text.BasicTokenizer(normalization_form=1)),
            "keep": attempt_out(lambda: text.BasicTokenizer(keep_whitespace="x")),
            "preserve": attempt_out(lambda: text.BasicTokenizer(preserve_unused_token=None)),
            "offsets": attempt_out(lambda: text.BasicTokenizer(with_offsets=0))}


def attempt_out(fn):
    try:
        return out(fn())
    except Exception as exc:  # the type and message are the observation
        return {"raises": type(exc).__name__, "message": str(exc)}


WORDPIECE_VOCAB = ["book", "era", "favor", "##ite", "my", "un", "##want", "##ed", "runn",
                   "##ing", "a", "##b", "##c", "é", "##é", "中", "[UNK]", "x"]


def case_wordpiece_tokenizer(ms):
    text = ms.dataset.text
    vocab = text.Vocab.from_list(WORDPIECE_VOCAB)

    def run(words, **kwargs):
        return attempt_out(lambda: text.WordpieceTokenizer(vocab, with_offsets=True,
                                                           **kwargs)(words))
    return {"words": run(["favorite", "unwanted", "running", "book"]),
            "partial": run(["abc", "abd", "zzz", ""]),
            "multibyte": run(["éé", "中中", "x"]),
            "scalar": run("favorite"),
            "no_offsets": attempt_out(lambda: text.WordpieceTokenizer(vocab)(["favorite"])),
            "unknown_empty": run(["abd", "favorite", "zzzz"], unknown_token=""),
            "max_bytes": run(["favorite", "book", "era"], max_bytes_per_token=4),
            "max_bytes_unknown_empty": run(["favorite"], max_bytes_per_token=4,
                                           unknown_token=""),
            "max_bytes_long_unknown": run(["favorite"], max_bytes_per_token=2,
                                          unknown_token="<unknown>"),
            "suffix": attempt_out(lambda: text.WordpieceTokenizer(
                text.Vocab.from_list(["fav", "@@orite"]), suffix_indicator="@@",
                with_offsets=True)(["favorite"])),
            "docstring": attempt_out(lambda: text.WordpieceTokenizer(
                text.Vocab.from_list(["book", "**ite", "the"]), suffix_indicator="y")(
                ["happy", "birthday", "to", "you"])),
            "two_d": run(np.array([["a", "b"], ["c", "d"]])),
            "ints": run(np.array([1])),
            "empty_input": run(np.array([], dtype=str))}


def case_wordpiece_tokenizer_errors(ms):
    text = ms.dataset.text
    vocab = text.Vocab.from_list(["a"])
    make = text.WordpieceTokenizer
    return {"vocab_list": attempt_out(lambda: make(["a"])),
            "vocab_none": attempt_out(lambda: make(None)),
            "negative": attempt_out(lambda: make(vocab, max_bytes_per_token=-1)),
            "float": attempt_out(lambda: make(vocab, max_bytes_per_token=1.5)),
            "too_big": attempt_out(lambda: make(vocab, max_bytes_per_token=2 ** 32)),
            "suffix": attempt_out(lambda: make(vocab, suffix_indicator=1)),
            "unknown": attempt_out(lambda: make(vocab, unknown_token=1)),
            "offsets": attempt_out(lambda: make(vocab, with_offsets=1))}


BERT_VOCAB = ["床", "前", "明", "月", "光", "i", "am", "mak", "##ing", "make", "small", "mistake",
              "##s", "during", "work", "hour", "[CLS]", "[SEP]", "[UNK]", "[PAD]", "[MASK]",
              "hello", "world", ",", "!", "cafe", "café", "##x"]


def case_bert_tokenizer(ms):
    text = ms.dataset.text
    vocab = text.Vocab.from_list(BERT_VOCAB)

    def run(sentence, **kwargs):
        return attempt_out(lambda: text.BertTokenizer(vocab, with_offsets=True, **kwargs)(
            sentence))
    answers = {f"{s} lower={lower}": run(s, lower_case=lower) for s in (
        "床前明月光", "I am making small mistakes during working hours",
        "[CLS] hello, world! [SEP] [UNK]", "Café cafés", "unknownword hello")
        for lower in (False, True)}
    answers.update({
        "keep_whitespace": run("hello  world", keep_whitespace=True),
        "no_preserve": run("[CLS] hello", preserve_unused_token=False),
        "unknown_empty": run("hello zzz worldx", unknown_token=""),
        "max_bytes": run("hello world", max_bytes_per_token=3),
        "nfd": run("café", normalization_form=text.NormalizeForm.NFD),
        "no_offsets": attempt_out(lambda: text.BertTokenizer(vocab)("hello, world")),
        "one_d": run(np.array(["a b"]))})
    return answers


def case_bert_tokenizer_errors(ms):
    text = ms.dataset.text
    vocab = text.Vocab.from_list(["a"])
    make = text.BertTokenizer
    return {"none": attempt_out(lambda: make(None)),
            "max_str": attempt_out(lambda: make(vocab, max_bytes_per_token="1")),
            "max_bool": attempt_out(lambda: make(vocab, max_bytes_per_token=True)),
            "max_negative": attempt_out(lambda: make(vocab, max_bytes_per_token=-2)),
            "form": attempt_out(lambda: make(vocab, normalization_form="NFC")),
            "vocab_str": attempt_out(lambda: make("x")),
            "lower": attempt_out(lambda: make(vocab, lower_case=0)),
            "unknown": attempt_out(lambda: make(vocab, unknown_token=None))}


def case_unicode_script_tokenizer(ms):
    text = ms.dataset.text
    sentences = ["Chinese中国 and English", "Hello, World! 123abc", "Привет мир 2024",
                 "مرحبا بالعالم", "日本語のテキストとカタカナー", "e\u0301 café", "a  b\t\nc",
                 "한국어 텍스트", "x+y=z 12.5%", "", "   ", "αβγ abc", "ｆｕｌｌ", "①②",
                 "\u200b zw", "a_b-c", "עברית text", "हिन्दी ok", "ไทย!"]
    answers = {f"keep={keep}": [out(text.UnicodeScriptTokenizer(keep, True)(s))
                                for s in sentences] for keep in (False, True)}
    answers["no_offsets"] = out(text.UnicodeScriptTokenizer()("北 京abc"))
    answers["one_d"] = attempt_out(lambda: text.UnicodeScriptTokenizer()(np.array(["a b"])))
    answers["int"] = attempt_out(lambda: text.UnicodeScriptTokenizer()(np.array(1)))
    answers["keep_int"] = attempt_out(lambda: text.UnicodeScriptTokenizer(keep_whitespace=1))
    answers["offsets_int"] = attempt_out(lambda: text.UnicodeScriptTokenizer(with_offsets=1))
    return answers


def case_filter_wikipedia_xml(ms):
    op = ms.dataset.text.FilterWikipediaXML()
    texts = ["Welcome    to    China", "!!!", "ABC", " lead and trail ",
             "digits 0123456789 x1y", "café naïve ÅB 北京", "#REDIRECT [[Foo]]", "#redirect x",
             "a #REDIRECT b", "#Redirect y", "<text xml:space=\"preserve\">Hello</text>",
             "<b>bold</b> text", "a &amp; b &lt;c&gt; &nbsp; d", "x<ref name=a>cite</ref>y",
             "[http://example.com visible text] end",
             "[[Image:foo.jpg|thumb|left|200px|A caption]]",
             "[[Category:Physics|sort]] [[de:Physik]]", "{{cite web|url=x}} {table} after",
             "tabs\tand\nnewlines", "", "   ", "mixed-CASE_words, with punctuation.",
             "RIGHT xRy |Right", "&amp;x;", "&lt;b&gt;x&lt;/b&gt;", "a<ref>b\nc</ref>d",
             "AB\nCD<x\ny>EF", "<a\rb> x", "a\u2028b", "a<b", "1.5"]
    return {"each": [out(op(t)) for t in texts],
            "two_d": out(op(np.array([["AB c"]]))),
            "int": attempt_out(lambda: op(np.array(1)))}


CASES = {name[len("case_"):]: fn for name, fn in sorted(globals().items())
         if name.startswith("case_")}
