"""``dataset.text`` word vectors, ICU-style tokenizers, FilterWikipediaXML and Jieba cases run
unchanged on MindSpore 2.10 and on mscore (see ``text_cases.py`` for the conventions).

File paths in answers are shown as ``<dir>/NAME``. Cases named ``file_error_*`` observe a bad
file: MindSpore raises ``RuntimeError``, mscore a ``ValueError`` whose message starts with
MindSpore's words (the test compares them so).
"""
import os
import re
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

# -- Jieba -------------------------------------------------------------------------------------
JIEBA_DICT = """床 10 n
前 20 f
明月 30 n
明月光 5 n
明 15 a
月 25 n
光 12 n
北京 100 ns
大学 80 n
北京大学 60 nt
生 40 v
大学生 30 n
活 10 v
生活 50 vn
我 200 r
来到 40 v
来 30 v
到 30 v
了 300 ul
清华 20 nz
清华大学 30 nt
中国 90 ns
科学院 20 n
科学 40 n
学院 30 n
计算 35 v
所 50 u
"""
JIEBA_CHARS = "他来到了网易杭研大厦小明硕士毕业于中国科学院计算所后在日本京都深造我爱和版你好世界"
JIEBA_SENTENCES = ["床前明月光", "我来到北京清华大学", "他来到了网易杭研大厦",
                   "小明硕士毕业于中国科学院计算所，后在日本京都大学深造",
                   "我爱Python3和C++ 2024.5版", "你好，世界。 ok  x", "大学生活", "明月光光", "",
                   "abc123def 12.5.6"]


def _jieba_files(folder):
    """A small MP dictionary and HMM model in cppjieba's formats, made up for the tests."""
    never = "-3.14e+100"
    rows = [f"-0.3 {never} {never} -1.4", f"{never} -0.5 -0.9 {never}",
            f"-0.6 {never} {never} -0.8", f"{never} -0.3 -1.3 {never}",
            f"-0.7 {never} {never} -0.7"]
    emit = []
    for state in range(4):
        items = [f"{c}:{-(1 + (ord(c) * (state + 3)) % 97 / 10):.4f}" for c in JIEBA_CHARS]
        emit.append(",".join(items))
    hmm = ("#prob_start\n" + rows[0] + "\n#prob_trans\n" + "\n".join(rows[1:]) + "\n"
           + "#prob_emit\n" + "".join(f"#{s}\n{line}\n" for s, line in zip("BEMS", emit)))
    return (_write(folder, "hmm_model.utf8", hmm),
            _write(folder, "jieba.dict.utf8", JIEBA_DICT))


def case_jieba_modes(ms):
    text, folder = ms.dataset.text, _folder()
    hmm, mp = _jieba_files(folder)
    answers = {}
    for mode in ("MIX", "MP", "HMM"):
        op = text.JiebaTokenizer(hmm, mp, getattr(text.JiebaMode, mode), with_offsets=True)
        answers[mode] = [out(op(s)) for s in JIEBA_SENTENCES]
    answers["default"] = out(text.JiebaTokenizer(hmm, mp)("我来到北京清华大学"))
    return answers


def case_jieba_user_words(ms):
    text, folder = ms.dataset.text, _folder()
    hmm, mp = _jieba_files(folder)
    sentence = "他来到了网易杭研大厦小明硕士"
    answers = {}
    for mode in ("MIX", "MP"):
        op = text.JiebaTokenizer(hmm, mp, getattr(text.JiebaMode, mode))
        op.add_word("网易")
        op.add_word("杭研", 1000)
        op.add_word("硕")
        answers[f"add_word {mode}"] = out(op(sentence))
        op = text.JiebaTokenizer(hmm, mp, getattr(text.JiebaMode, mode))
        op.add_dict({"大厦": 10, "小明": 0})
        answers[f"add_dict {mode}"] = out(op(sentence))
        op = text.JiebaTokenizer(hmm, mp, getattr(text.JiebaMode, mode))
        op.add_dict(_write(folder, "user.txt", "网易 20\n\ufeff杭研\n   bad line here\n"
                                               "大厦 5\n"))
        answers[f"add_dict_file {mode}"] = out(op(sentence))
    return answers


def case_jieba_errors(ms):
    text, folder = ms.dataset.text, _folder()
    hmm, mp = _jieba_files(folder)
    make = text.JiebaTokenizer
    op = make(hmm, mp)
    return {"hmm_none": _try(folder, lambda: make(None, mp)),
            "mp_none": _try(folder, lambda: make(hmm, None)),
            "hmm_int": _try(folder, lambda: make(1, mp)),
            "mp_int": _try(folder, lambda: make(hmm, 1)),
            "mode": _try(folder, lambda: make(hmm, mp, mode=1)),
            "offsets": _try(folder, lambda: make(hmm, mp, with_offsets=1)),
            "hmm_missing": _try(folder, lambda: make(folder + "/none.utf8", mp)),
            "mp_missing": _try(folder, lambda: make(hmm, folder + "/none.utf8")),
            "word_none": _try(folder, lambda: op.add_word(None)),
            "freq_negative": _try(folder, lambda: op.add_word("x", -1)),
            "freq_float": _try(folder, lambda: op.add_word("x", 1.5)),
            "dict_int": _try(folder, lambda: op.add_dict(3)),
            "dict_missing": _try(folder, lambda: op.add_dict(folder + "/none.txt")),
            "one_d": _try(folder, lambda: out(op(np.array(["我来到"])))),
            "int": _try(folder, lambda: out(op(np.array(1))))}


# -- SentencePiece (needs the sentencepiece package on mscore's side) ---------------------------
def _sentencepiece_corpus(folder):
    words = ("the quick brown fox jumps over lazy dog hello world machine learning is fun data "
             "science python code model training tokenizer sentence piece").split()
    lines = [" ".join(words[(i * 13 + k * 5) % len(words)] for k in range(3 + (i * 7) % 9))
             for i in range(300)]
    return lines, _write(folder, "corpus.txt", "\n".join(lines) + "\n")


def _library_words(answer):
    """``answer`` without the sentencepiece source line numbers its messages quote."""
    if isinstance(answer, dict) and "message" in answer:
        return dict(answer, message=re.sub(r"\.cc\(\d+\)", ".cc(N)", answer["message"]))
    return answer


def case_sentencepiece_models(ms):
    text, folder = ms.dataset.text, _folder()
    model = text.SentencePieceModel
    kind = text.SPieceTokenizerOutType
    _, corpus = _sentencepiece_corpus(folder)
    answers = {}
    # UNIGRAM training differs between sentencepiece releases (MindSpore bundles an older
    # one): case sentencepiece_unigram_model tokenizes with a model MindSpore trained.
    for name, size in (("BPE", 60), ("CHAR", 40), ("WORD", 20)):
        vocab = text.SentencePieceVocab.from_file([corpus], size, 0.9995, getattr(model, name),
                                                  {})
        answers[name] = [out(text.SentencePieceTokenizer(vocab, kind.STRING)(sentence))
                         for sentence in ("Hello world, the quick fox!", "the lazy dog", "")]
        answers[f"{name} ids"] = out(text.SentencePieceTokenizer(vocab, kind.INT)(
            "Hello world, the quick fox!"))
    vocab = text.SentencePieceVocab.from_file([corpus], 60, 0.9995, model.BPE,
                                              {"split_by_whitespace": "false", "vocab_size": "5"})
    answers["params"] = out(text.SentencePieceTokenizer(vocab, kind.STRING)("the lazy dog"))
    answers["too_big"] = _library_words(_try(folder, lambda: text.SentencePieceVocab.from_file(
        [corpus], 60, 0.9995, model.UNIGRAM, {}) and "ok"))
    return answers


def case_sentencepiece_dataset_and_saved_model(ms):
    text, folder = ms.dataset.text, _folder()
    kind = text.SPieceTokenizerOutType
    lines, _ = _sentencepiece_corpus(folder)
    data = ms.dataset.NumpySlicesDataset(lines, column_names=["text"], shuffle=False)
    vocab = text.SentencePieceVocab.from_dataset(data, ["text"], 60, 0.9995,
                                                 text.SentencePieceModel.BPE, {})
    text.SentencePieceVocab.save_model(vocab, folder, "m.model")
    tokenizer = text.SentencePieceTokenizer(os.path.join(folder, "m.model"), kind.INT)
    pipeline = ms.dataset.NumpySlicesDataset(["the dog", "fun"], column_names=["text"],
                                             shuffle=False).map(tokenizer)
    return {"vocab": out(text.SentencePieceTokenizer(vocab, kind.STRING)("the lazy dog")),
            "saved": out(tokenizer("the lazy dog")),
            "pipeline": [out(row["text"]) for row in pipeline.create_dict_iterator(
                num_epochs=1, output_numpy=True)]}


UNIGRAM_MODEL = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                             "mindspore_sentencepiece_unigram.model")


def make_unigram_model(ms):
    """Train MindSpore's UNIGRAM model of the corpus (identity normalization keeps the file
    small) and save it as ``UNIGRAM_MODEL``; run by the recorder, with MindSpore."""
    text, folder = ms.dataset.text, _folder()
    _, corpus = _sentencepiece_corpus(folder)
    vocab = text.SentencePieceVocab.from_file([corpus], 40, 0.9995,
                                              text.SentencePieceModel.UNIGRAM,
                                              {"normalization_rule_name": "identity"})
    text.SentencePieceVocab.save_model(vocab, os.path.dirname(UNIGRAM_MODEL),
                                       os.path.basename(UNIGRAM_MODEL))


def case_sentencepiece_unigram_model(ms):
    text = ms.dataset.text
    kind = text.SPieceTokenizerOutType
    pieces = text.SentencePieceTokenizer(UNIGRAM_MODEL, kind.STRING)
    ids = text.SentencePieceTokenizer(UNIGRAM_MODEL, kind.INT)
    sentences = ("Hello world, the quick fox!", "the lazy dog", "datascience  python", "",
                 "ünïcode 北京")
    return {"pieces": [out(pieces(s)) for s in sentences],
            "ids": [out(ids(s)) for s in sentences]}


def case_sentencepiece_errors(ms):
    text, folder = ms.dataset.text, _folder()
    model, kind = text.SentencePieceModel, text.SPieceTokenizerOutType
    lines, corpus = _sentencepiece_corpus(folder)
    data = ms.dataset.NumpySlicesDataset(lines, column_names=["text"], shuffle=False)
    vocab_class = type(text.SentencePieceVocab())

    def named(answer):
        if isinstance(answer, dict):
            answer["message"] = answer["message"].replace(
                f"{vocab_class.__module__}.{vocab_class.__name__}", "SentencePieceVocab")
        return answer
    from_file = text.SentencePieceVocab.from_file
    return {"path_str": _try(folder, lambda: from_file(corpus, 40, 0.9995, model.UNIGRAM, {})),
            "size_negative": _try(folder, lambda: from_file([corpus], -1, 0.9995, model.UNIGRAM,
                                                            {})),
            "coverage_int": _try(folder, lambda: from_file([corpus], 40, 1, model.UNIGRAM, {})),
            "model_int": _try(folder, lambda: from_file([corpus], 40, 1.0, 1, {})),
            "params_list": _try(folder, lambda: from_file([corpus], 40, 1.0, model.UNIGRAM, [])),
            "size_none": _try(folder, lambda: text.SentencePieceVocab.from_dataset(
                data, ["text"], None, 0.9995, model.UNIGRAM, {})),
            "column": _try(folder, lambda: text.SentencePieceVocab.from_dataset(
                data, ["nope"], 40, 0.9995, model.UNIGRAM, {}) and "ok"),
            "mode_int": named(_try(folder, lambda: text.SentencePieceTokenizer(1, kind.STRING))),
            "out_int": _try(folder, lambda: text.SentencePieceTokenizer(folder, 1)),
            "save_str": named(_try(folder, lambda: text.SentencePieceVocab.save_model(
                "x", folder, "m"))),
            "one_d": _try(folder, lambda: text.SentencePieceTokenizer(
                from_file([corpus], 40, 0.9995, model.UNIGRAM, {}), kind.STRING)(
                np.array(["a b"])))}


def case_file_error_sentencepiece(ms):
    text, folder = ms.dataset.text, _folder()
    kind = text.SPieceTokenizerOutType
    _, corpus = _sentencepiece_corpus(folder)
    vocab = text.SentencePieceVocab.from_file([corpus], 40, 0.9995,
                                              text.SentencePieceModel.UNIGRAM, {})
    bad = _write(folder, "bad.model", "not a model")
    return {"missing_model": _try(folder, lambda: text.SentencePieceTokenizer(
                os.path.join(folder, "none.model"), kind.STRING)("a")),
            "bad_model": _try(folder, lambda: text.SentencePieceTokenizer(bad, kind.STRING)(
                "a")),
            "save_no_folder": _try(folder, lambda: text.SentencePieceVocab.save_model(
                vocab, os.path.join(folder, "nodir"), "m.model"))}


CASES = {name[len("case_"):]: fn for name, fn in sorted(globals().items())
         if name.startswith("case_")}
