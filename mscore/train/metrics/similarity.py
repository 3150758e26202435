"""Overlap and similarity metrics: ``BleuScore`` (machine translation), ``CosineSimilarity``,
``Dice``."""
from __future__ import annotations

from collections import Counter

import numpy as np

from mscore.train.metrics._checks import check_positive_float, check_str_choice, check_type
from mscore.train.metrics.metric import (
    Metric,
    check_input_count,
    empty_error,
    not_updated_error,
    rearrange_inputs,
)

__all__ = ["BleuScore", "CosineSimilarity", "Dice"]


def _ngram_counts(tokens, max_n):
    """How often each n-gram (n = 1 .. max_n, as a tuple) occurs in ``tokens``."""
    counts = Counter()
    for n in range(1, max_n + 1):
        for start in range(len(tokens) - n + 1):
            counts[tuple(tokens[start:start + n])] += 1
    return counts


class BleuScore(Metric):
    """BLEU of candidate translations against their references, over every batch.

    ``update(candidate_corpus, reference_corpus)``: a list of token lists, and for each a list
    of reference token lists. ``n_gram`` (int, 1..4) is the longest n-gram; ``smooth`` adds one
    to every n-gram count. ``eval`` is 0 (a 0-d array) when some n-gram order has no match.
    """

    def __init__(self, n_gram=4, smooth=False):
        super().__init__()
        self.n_gram = check_type("n_gram", n_gram, [int], "BleuScore")
        if not 1 <= n_gram <= 4:
            raise ValueError(f"For 'BleuScore', 'n_gram' must be in [1, 4], but got {n_gram}.")
        self.smooth = check_type("smooth", smooth, [bool], "BleuScore")
        self.clear()

    def clear(self):
        """Reset the counts."""
        self._numerator = np.zeros(self.n_gram)
        self._denominator = np.zeros(self.n_gram)
        self._c = 0.0
        self._r = 0.0
        self._is_update = False

    @rearrange_inputs
    def update(self, *inputs):
        """Count the n-grams of one batch ``(candidate_corpus, reference_corpus)``."""
        check_input_count("BleuScore", inputs, 2, "(candidate_corpus, reference_corpus)")
        candidates, references = inputs
        if len(candidates) != len(references):
            raise ValueError(f"For 'BleuScore.update', the candidate corpus (inputs[0]) and the "
                             f"reference corpus (inputs[1]) must have the same length, but got "
                             f"{len(candidates)} and {len(references)}.")
        for candidate, refs in zip(candidates, references):
            self._c += len(candidate)
            ref_lengths = [len(ref) for ref in refs]
            gaps = [abs(len(candidate) - n) for n in ref_lengths]
            self._r += ref_lengths[gaps.index(min(gaps))]  # the closest reference length
            candidate_counts = _ngram_counts(candidate, self.n_gram)
            best_ref_counts = Counter()
            for ref in refs:
                best_ref_counts |= _ngram_counts(ref, self.n_gram)
            for gram, count in (candidate_counts & best_ref_counts).items():
                self._numerator[len(gram) - 1] += count
            for gram, count in candidate_counts.items():
                self._denominator[len(gram) - 1] += count
        self._is_update = True

    def eval(self):
        """The BLEU score."""
        if not self._is_update:
            raise not_updated_error("BleuScore")
        if min(self._numerator) == 0.0:
            return np.array(0.0)
        if self.smooth:
            precisions = (self._numerator + 1.0) / (self._denominator + 1.0)
        else:
            precisions = self._numerator / self._denominator
        geometric_mean = np.exp(np.sum(np.log(precisions) / self.n_gram))
        brevity = 1.0 if self._c > self._r else np.exp(1.0 - self._r / self._c)
        return float(brevity * geometric_mean)


class CosineSimilarity(Metric):
    """Pairwise similarity of the rows of the last input: ``'cosine'`` or ``'dot'``, the
    diagonal set to 0 when ``zero_diagonal``, then ``reduction`` over each row (``'none'``,
    ``'sum'``, ``'mean'``)."""

    def __init__(self, similarity="cosine", reduction="none", zero_diagonal=True):
        super().__init__()
        owner = "CosineSimilarity"
        self.similarity = check_str_choice("similarity", similarity, ("dot", "cosine"), owner)
        self.reduction = check_str_choice("reduction", reduction, ("none", "sum", "mean"), owner)
        self.zero_diagonal = check_type("zero_diagonal", zero_diagonal, [bool], owner)
        self.clear()

    def clear(self):
        """Forget the stored matrix."""
        self.sqr_mtx_res = 0
        self._is_update = False

    @rearrange_inputs
    def update(self, inputs):
        """Compute the similarity matrix of ``inputs`` (N x D); replaces the previous one."""
        data = self._convert_data(inputs)
        if self.similarity == "cosine":
            data = data / np.expand_dims(np.linalg.norm(data, ord=2, axis=1), 1)
        self.sqr_mtx_res = np.dot(data, data.T)
        self._is_update = True

    def eval(self):
        """The N x N matrix (``'none'``) or its per-row sum or mean."""
        if not self._is_update:
            raise not_updated_error("CosineSimilarity")
        matrix = np.array(self.sqr_mtx_res)
        if self.zero_diagonal:
            np.fill_diagonal(matrix, 0)
        if self.reduction == "mean":
            return np.mean(matrix, axis=-1)
        if self.reduction == "sum":
            return np.sum(matrix, axis=-1)
        return matrix


class Dice(Metric):
    """Dice coefficient ``2 |X.Y| / (|X|^2 + |Y|^2 + smooth)`` of each batch, summed over the
    batches and divided by the number of samples (rows) seen, as MindSpore does."""

    def __init__(self, smooth=1e-5):
        super().__init__()
        self.smooth = check_positive_float("smooth", smooth, "Dice")
        self.clear()

    def clear(self):
        """Reset the sums."""
        self._dice_coeff_sum = 0
        self._samples_num = 0

    @rearrange_inputs
    def update(self, *inputs):
        """Add the Dice coefficient of one batch ``(y_pred, y)`` of the same shape."""
        check_input_count("Dice", inputs, 2, "(predicted value, true value)")
        y_pred = self._convert_data(inputs[0])
        y = self._convert_data(inputs[1])
        if y_pred.shape != y.shape:
            raise ValueError(f"For 'Dice.update', the predicted value (inputs[0]) and the true "
                             f"value (inputs[1]) must have the same shape, but got {y_pred.shape} "
                             f"and {y.shape}.")
        p = y_pred.reshape(-1).astype(np.float64)
        t = y.reshape(-1).astype(np.float64)
        union = float(np.dot(p, p) + np.dot(t, t))
        self._dice_coeff_sum += 2 * float(np.dot(p, t)) / (union + self.smooth)
        self._samples_num += y.shape[0]

    def eval(self):
        """The summed coefficients divided by the number of samples."""
        if self._samples_num == 0:
            raise empty_error("Dice")
        return self._dice_coeff_sum / float(self._samples_num)
