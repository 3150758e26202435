"""Whole training programs in the style of MindSpore's public tutorials, written for this
corpus (data made here, small), run unchanged on MindSpore 2.10 and on mscore.

Each program takes the framework's top-level module and returns the loss of each training
step. Weights are set from the parameter names (:func:`fixed_weights`), so both frameworks
start from the same point; ``record_oracle.py`` records MindSpore's losses into
``mindspore_losses.json`` and ``tests/test_programs.py`` compares mscore's on every backend.
"""
import importlib
import zlib

import numpy as np


def fixed_weights(ms, net, scale=0.1):
    """Give every parameter a value drawn from its name (the same in both frameworks):
    normalization scales 1, shifts and running means 0, running variances 1."""
    for param in net.get_parameters():
        name = param.name
        shape = tuple(param.shape)
        if name.endswith(("gamma", "moving_variance")):
            value = np.ones(shape, np.float32)
        elif name.endswith(("beta", "moving_mean")):
            value = np.zeros(shape, np.float32)
        else:
            rng = np.random.RandomState(zlib.crc32(name.encode()))
            value = (rng.standard_normal(shape) * scale).astype(np.float32)
        param.set_data(ms.Tensor(value))


def _step_losses(ms):
    """A callback class of ``ms`` that keeps the loss of every step."""
    class StepLoss(ms.train.Callback):
        def __init__(self):
            super().__init__()
            self.losses = []

        def on_train_step_end(self, run_context):
            loss = run_context.original_args().net_outputs
            if isinstance(loss, (tuple, list)):
                loss = loss[0]
            self.losses.append(float(loss.asnumpy()))
    return StepLoss()


def _train(ms, net, loss_fn, optimizer, data, epochs=1):
    model = ms.train.Model(net, loss_fn, optimizer)
    record = _step_losses(ms)
    model.train(epochs, data, callbacks=[record], dataset_sink_mode=False)
    return record.losses


# -- LeNet-5 on 16x16 images (the quick-start tutorial's network, smaller) ------------------
def lenet(ms):
    nn = ms.nn

    class LeNet5(nn.Cell):
        def __init__(self, num_class=4):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 4, 3, pad_mode="valid")
            self.conv2 = nn.Conv2d(4, 8, 3, pad_mode="valid")
            self.relu = nn.ReLU()
            self.pool = nn.MaxPool2d(kernel_size=2, stride=2)
            self.flatten = nn.Flatten()
            self.fc1 = nn.Dense(8 * 2 * 2, 16)
            self.fc2 = nn.Dense(16, num_class)

        def construct(self, x):
            x = self.pool(self.relu(self.conv1(x)))
            x = self.pool(self.relu(self.conv2(x)))
            return self.fc2(self.relu(self.fc1(self.flatten(x))))

    rng = np.random.RandomState(0)
    images = rng.standard_normal((24, 1, 14, 14)).astype(np.float32)
    labels = (images.mean(axis=(1, 2, 3)) > 0).astype(np.int32) + \
        2 * (images[:, 0, 0, 0] > 0).astype(np.int32)
    data = ms.dataset.NumpySlicesDataset((images, labels), column_names=["image", "label"],
                                         shuffle=False).batch(8)
    net = LeNet5()
    fixed_weights(ms, net)
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    opt = nn.Momentum(net.trainable_params(), learning_rate=0.05, momentum=0.9)
    return _train(ms, net, loss, opt, data, epochs=2)


# -- LSTM sentiment classifier over tokenized sentences (dataset.text) ---------------------
_SENTENCES = [("a great and moving film", 1), ("dull and far too long", 0),
              ("great acting and a great story", 1), ("a boring story", 0),
              ("moving and great", 1), ("too long and dull and boring", 0),
              ("a film with great heart", 1), ("boring acting", 0)]


def lstm_sentiment(ms):
    nn, text = ms.nn, ms.dataset.text

    def rows():
        for sentence, label in _SENTENCES:
            yield np.array(sentence), np.array(label, np.int32)

    data = ms.dataset.GeneratorDataset(rows, column_names=["text", "label"], shuffle=False)
    data = data.map(text.WhitespaceTokenizer(), "text")
    vocab = text.Vocab.from_dataset(data, "text", special_tokens=["<pad>", "<unk>"])
    data = data.map(text.Lookup(vocab, "<unk>"), "text")
    data = data.map(ms.dataset.transforms.PadEnd([6], 0), "text")
    data = data.batch(4)

    class SentimentNet(nn.Cell):
        def __init__(self, vocab_size, embed=8, hidden=8):
            super().__init__()
            self.embedding = nn.Embedding(vocab_size, embed)
            self.lstm = nn.LSTM(embed, hidden, batch_first=True)
            self.fc = nn.Dense(hidden, 2)

        def construct(self, tokens):
            output, _ = self.lstm(self.embedding(tokens))
            return self.fc(output[:, -1, :])

    net = SentimentNet(len(vocab.vocab()))
    fixed_weights(ms, net, scale=0.3)
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    opt = nn.Adam(net.trainable_params(), learning_rate=0.05)
    return _train(ms, net, loss, opt, data, epochs=3)


# -- a small Transformer encoder classifier (attention written out, Tensor.swapaxes) -------
def transformer(ms):
    nn, ops = ms.nn, ms.ops

    class SelfAttention(nn.Cell):
        def __init__(self, dim, heads):
            super().__init__()
            self.heads, self.head_dim = heads, dim // heads
            self.qkv = nn.Dense(dim, 3 * dim)
            self.out = nn.Dense(dim, dim)
            self.softmax = nn.Softmax(axis=-1)

        def construct(self, x):
            b, n, d = x.shape
            qkv = self.qkv(x).reshape(b, n, 3, self.heads, self.head_dim)
            q = qkv[:, :, 0].swapaxes(1, 2)
            k = qkv[:, :, 1].swapaxes(1, 2)
            v = qkv[:, :, 2].swapaxes(1, 2)
            scores = ops.matmul(q, k.swapaxes(-1, -2)) / (self.head_dim ** 0.5)
            context = ops.matmul(self.softmax(scores), v).swapaxes(1, 2).reshape(b, n, d)
            return self.out(context)

    class EncoderClassifier(nn.Cell):
        def __init__(self, vocab=12, dim=8, heads=2, classes=3):
            super().__init__()
            self.embedding = nn.Embedding(vocab, dim)
            self.attention = SelfAttention(dim, heads)
            self.norm1 = nn.LayerNorm((dim,))
            self.ff = nn.SequentialCell([nn.Dense(dim, 16), nn.GELU(), nn.Dense(16, dim)])
            self.norm2 = nn.LayerNorm((dim,))
            self.head = nn.Dense(dim, classes)

        def construct(self, tokens):
            x = self.embedding(tokens)
            x = self.norm1(x + self.attention(x))
            x = self.norm2(x + self.ff(x))
            return self.head(x.mean(axis=1))

    rng = np.random.RandomState(1)
    tokens = rng.randint(0, 12, size=(16, 5)).astype(np.int32)
    labels = (tokens.sum(axis=1) % 3).astype(np.int32)
    data = ms.dataset.NumpySlicesDataset((tokens, labels), column_names=["tokens", "label"],
                                         shuffle=False).batch(4)
    net = EncoderClassifier()
    fixed_weights(ms, net, scale=0.3)
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    opt = nn.Adam(net.trainable_params(), learning_rate=0.01)
    return _train(ms, net, loss, opt, data, epochs=2)


# -- a tiny Vision Transformer (patch embedding by convolution, class token) ---------------
def vit(ms):
    nn, ops = ms.nn, ms.ops

    class TinyViT(nn.Cell):
        def __init__(self, dim=8, patch=4, image=8, classes=2):
            super().__init__()
            self.patch_embed = nn.Conv2d(1, dim, patch, stride=patch, pad_mode="valid",
                                         has_bias=True)
            patches = (image // patch) ** 2
            self.cls_token = ms.Parameter(ms.Tensor(np.zeros((1, 1, dim), np.float32)),
                                          name="cls_token")
            self.pos_embed = ms.Parameter(ms.Tensor(np.zeros((1, patches + 1, dim),
                                                             np.float32)), name="pos_embed")
            self.norm = nn.LayerNorm((dim,))
            self.mix = nn.Dense(dim, dim)
            self.head = nn.Dense(dim, classes)

        def construct(self, x):
            x = self.patch_embed(x)
            b, d = x.shape[0], x.shape[1]
            x = x.reshape(b, d, -1).transpose(0, 2, 1)
            cls = ops.broadcast_to(self.cls_token, (b, 1, d))
            x = ops.concat((cls, x), axis=1) + self.pos_embed
            x = x + ops.tanh(self.mix(self.norm(x)))
            return self.head(x[:, 0])

    rng = np.random.RandomState(2)
    images = rng.standard_normal((12, 1, 8, 8)).astype(np.float32)
    labels = (images[:, :, :4].mean(axis=(1, 2, 3)) > images[:, :, 4:].mean(axis=(1, 2, 3)))
    data = ms.dataset.NumpySlicesDataset((images, labels.astype(np.int32)),
                                         column_names=["image", "label"],
                                         shuffle=False).batch(4)
    net = TinyViT()
    fixed_weights(ms, net, scale=0.3)
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    opt = nn.SGD(net.trainable_params(), learning_rate=0.1)
    return _train(ms, net, loss, opt, data, epochs=2)


# -- BiLSTM-CRF sequence labelling (the CRF written with mindspore.numpy, trained with
#    value_and_grad as the tutorial does) -----------------------------------------------
def _sequence_mask(ms, mnp, seq_length, max_length):
    """(batch, max_length) int64: 1 inside each sequence, 0 in its padding."""
    positions = mnp.arange(0, max_length, 1, seq_length.dtype)
    return (positions < seq_length.view(seq_length.shape + (1,))).astype(ms.int64)


def _crf_score(mnp, emissions, tags, seq_ends, mask, trans, start, end):
    """The score of the given tag paths; ``emissions`` (seq, batch, tags), ``tags`` and
    ``mask`` (seq, batch)."""
    seq_length, batch_size = tags.shape
    mask = mask.astype(emissions.dtype)
    batch = mnp.arange(batch_size)
    score = start[tags[0]] + emissions[0, batch, tags[0]]
    for i in range(1, seq_length):
        score += trans[tags[i - 1], tags[i]] * mask[i]
        score += emissions[i, batch, tags[i]] * mask[i]
    return score + end[tags[seq_ends, batch]]


def _crf_normalizer(ms, mnp, emissions, mask, trans, start, end):
    """The log-sum of the scores of every tag path (the forward algorithm)."""
    score = start + emissions[0]
    for i in range(1, emissions.shape[0]):
        step = mnp.expand_dims(score, 2) + trans + mnp.expand_dims(emissions[i], 1)
        step = ms.ops.logsumexp(step, 1)
        score = mnp.where(mnp.expand_dims(mask[i], 1).astype(ms.bool_), step, score)
    return ms.ops.logsumexp(score + end, 1)


def bilstm_crf(ms):
    nn = ms.nn
    mnp = importlib.import_module(ms.__name__ + ".numpy")  # import mindspore.numpy as mnp

    class CRF(nn.Cell):
        def __init__(self, num_tags):
            super().__init__()
            self.transitions = ms.Parameter(ms.Tensor(np.zeros((num_tags, num_tags),
                                                               np.float32)), name="transitions")
            self.start_transitions = ms.Parameter(ms.Tensor(np.zeros(num_tags, np.float32)),
                                                  name="start_transitions")
            self.end_transitions = ms.Parameter(ms.Tensor(np.zeros(num_tags, np.float32)),
                                                name="end_transitions")

        def construct(self, emissions, tags, seq_length):
            emissions, tags = emissions.swapaxes(0, 1), tags.swapaxes(0, 1)
            mask = _sequence_mask(ms, mnp, seq_length, tags.shape[0]).swapaxes(0, 1)
            score = _crf_score(mnp, emissions, tags, seq_length - 1, mask, self.transitions,
                               self.start_transitions, self.end_transitions)
            normalizer = _crf_normalizer(ms, mnp, emissions, mask, self.transitions,
                                         self.start_transitions, self.end_transitions)
            return mnp.mean(normalizer - score)

    class BiLSTMCRF(nn.Cell):
        def __init__(self, vocab, num_tags, embed=6, hidden=5):
            super().__init__()
            self.embedding = nn.Embedding(vocab, embed)
            self.lstm = nn.LSTM(embed, hidden, batch_first=True, bidirectional=True)
            self.hidden2tag = nn.Dense(hidden * 2, num_tags)
            self.crf = CRF(num_tags)

        def construct(self, tokens, tags, seq_length):
            features, _ = self.lstm(self.embedding(tokens), seq_length=seq_length)
            return self.crf(self.hidden2tag(features), tags, seq_length)

    rng = np.random.RandomState(3)
    lengths = np.array([6, 4, 5, 3, 6, 2, 5, 4], np.int32)
    tokens = rng.randint(1, 10, size=(8, 6)).astype(np.int32)
    tags = (tokens % 3).astype(np.int32)
    for row, n in enumerate(lengths):
        tokens[row, n:] = 0
        tags[row, n:] = 0
    data = ms.dataset.NumpySlicesDataset((tokens, tags, lengths),
                                         column_names=["tokens", "tags", "length"],
                                         shuffle=False).batch(4)
    net = BiLSTMCRF(10, 3)
    fixed_weights(ms, net, scale=0.3)
    optimizer = nn.SGD(net.trainable_params(), learning_rate=0.1)
    grad_fn = ms.value_and_grad(net, None, optimizer.parameters)

    def train_step(tokens, tags, length):
        loss, grads = grad_fn(tokens, tags, length)
        optimizer(grads)
        return loss

    net.set_train()
    losses = []
    for _ in range(3):
        for batch in data.create_tuple_iterator():
            losses.append(float(train_step(*batch).asnumpy()))
    return losses


PROGRAMS = {"lenet": lenet, "lstm_sentiment": lstm_sentiment, "transformer": transformer,
            "vit": vit, "bilstm_crf": bilstm_crf}
