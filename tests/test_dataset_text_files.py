"""``mscore.dataset.text`` beyond MindSpore's recorded answers: bad vectors and Jieba files
are refused with a ``ValueError`` naming the file (where MindSpore reads a field that is no
number as 0 or stops its process), and the text transforms work inside a pipeline whose
output becomes a Tensor on every installed backend."""
import numpy as np
import pytest
from _helpers import available_backends, use_backend

import mscore as ms
from mscore.dataset import text


def _write(path, content, mode="w"):
    with open(path, mode, **({} if "b" in mode else {"encoding": "utf-8"})) as f:
        f.write(content)
    return str(path)


@pytest.mark.parametrize("content, words", [
    ("a 1 x\n", "line 1: 'x' is not a number"),
    ("a 1 2\nb 3 4e\n", "line 2: '4e' is not a number"),
    ("2 2\na 1  2\nb 3  4\n", "line 2: '' is not a number"),
])
def test_vectors_with_a_field_that_is_no_number_are_refused(tmp_path, content, words):
    path = _write(tmp_path / "v.txt", content)
    with pytest.raises(ValueError, match=f"{path}.*{words}"):
        text.Vectors.from_file(path)


def test_vectors_file_that_is_not_utf8_is_refused(tmp_path):
    path = _write(tmp_path / "glove.6B.2d.txt", b"a 1 2\n\xff\xfe 3 4\n", "wb")
    with pytest.raises(ValueError, match=f"{path} is not UTF-8"):
        text.GloVe.from_file(path)


def test_vectors_file_that_is_a_folder_is_refused(tmp_path):
    folder = tmp_path / "x.vec"
    folder.mkdir()
    with pytest.raises(ValueError, match="FastText: invalid file, failed to open FastText"):
        text.FastText.from_file(str(folder))


HMM = ("#start\n-0.3 -3.14e+100 -3.14e+100 -1.4\n#trans\n-3.14e+100 -0.5 -0.9 -3.14e+100\n"
       "-0.6 -3.14e+100 -3.14e+100 -0.8\n-3.14e+100 -0.3 -1.3 -3.14e+100\n"
       "-0.7 -3.14e+100 -3.14e+100 -0.7\n#emit\n他:-1,们:-2\n们:-1\n他:-3\n他:-1,们:-5\n")


@pytest.mark.parametrize("hmm, mp, words", [
    (HMM, "他们 10\n", "MP dictionary .*jieba.dict.utf8, line 1: expected 'word freq tag'"),
    (HMM, "他们 ten n\n", "MP dictionary .*jieba.dict.utf8, line 1: 'ten' is not a number"),
    (HMM, "他们 0 n\n", "MP dictionary .*jieba.dict.utf8 has no word with a positive"),
    (HMM.replace("-0.6 -3.14e+100", "-0.6"), "他们 10 n\n", "hmm_model.utf8, line 5: expected 4"),
    (HMM.replace("他:-1,们:-2", "他们:-1"), "他们 10 n\n", "hmm_model.utf8, line 9: expected "
                                                          "'char:logprob'"),
    ("#only a comment\n", "他们 10 n\n", "hmm_model.utf8: expected 9 lines"),
])
def test_jieba_files_that_are_malformed_are_refused(tmp_path, hmm, mp, words):
    hmm_path = _write(tmp_path / "hmm_model.utf8", hmm)
    mp_path = _write(tmp_path / "jieba.dict.utf8", mp)
    with pytest.raises(ValueError, match=words):
        text.JiebaTokenizer(hmm_path, mp_path)


def test_jieba_on_a_well_formed_pair_segments_by_the_dictionary(tmp_path):
    tokenizer = text.JiebaTokenizer(_write(tmp_path / "hmm_model.utf8", HMM),
                                    _write(tmp_path / "jieba.dict.utf8", "他们 10 n\n他 1 r\n"),
                                    text.JiebaMode.MP, with_offsets=True)
    tokens, begins, ends = tokenizer("他们他")
    assert tokens.tolist() == ["他们", "他"]
    assert begins.tolist() == [0, 6] and ends.tolist() == [6, 9]


def test_filter_wikipedia_xml_cleans_every_string_of_a_tensor():
    # MindSpore 2.10 blanks all but the first string of a 1-D tensor; mscore cleans each.
    out = text.FilterWikipediaXML()(np.array(["AB c", "D 1"]))
    assert out.tolist() == ["ab c", "d one"]


@pytest.mark.parametrize("backend", available_backends())
def test_pipeline_vectors_become_tensors_on_each_backend(backend, tmp_path):
    use_backend(backend)
    path = _write(tmp_path / "vectors.txt", "happy 1 2 3\nbirthday 4 5 6\nto -1 0.5 2\n")
    data = ms.dataset.NumpySlicesDataset(data=["happy", "birthday", "to", "you"],
                                         column_names=["text"], shuffle=False)
    data = data.map(operations=[text.ToVectors(text.Vectors.from_file(path))], input_columns="text")
    rows = [row["text"] for row in data.create_dict_iterator(num_epochs=1)]
    assert all(isinstance(row, ms.Tensor) for row in rows)
    total = sum(float(row.sum().asnumpy()) for row in rows)
    assert total == pytest.approx(6 + 15 + 1.5)


def test_pipeline_tokenizer_with_offsets_fills_three_columns():
    data = ms.dataset.NumpySlicesDataset(data=["Welcome     To   BeiJing!"],
                                         column_names=["text"], shuffle=False)
    data = data.map(operations=text.BasicTokenizer(with_offsets=True), input_columns=["text"],
                    output_columns=["token", "offsets_start", "offsets_limit"])
    row = next(data.create_dict_iterator(num_epochs=1, output_numpy=True))
    # MindSpore's docstring answer: ['Welcome' 'To' 'BeiJing' '!'] [ 0 12 17 24] [ 7 14 24 25]
    assert row["token"].tolist() == ["Welcome", "To", "BeiJing", "!"]
    assert row["offsets_start"].tolist() == [0, 12, 17, 24]
    assert row["offsets_limit"].tolist() == [7, 14, 24, 25]
