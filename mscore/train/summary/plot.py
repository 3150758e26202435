"""``mscore plot LOG_DIR -o loss.png``: loss and learning-rate curves of a summary directory.

Uses matplotlib's Agg canvas directly (no pyplot), so it changes no global plotting state
and needs no display.
"""
from __future__ import annotations

import argparse
import os
import sys

from mscore.train.summary.reader import CorruptRecordError, event_files, load_summaries

_LOSS_KEYS = ("loss",)
_LR_KEYS = ("learning_rate", "lr")


def _matches(tag, keys):
    low = tag.lower()
    return any(k == low or low.startswith(k + "/") or f"/{k}" in low or low.endswith(k)
               for k in keys)


def _series(points):
    points = sorted(points, key=lambda p: p[0])   # by step; a later record wins a tie
    steps, values, last = [], [], {}
    for step, _, value in points:
        last[step] = value
    for step in sorted(last):
        steps.append(step)
        values.append(last[step])
    return steps, values


def plot_summary(log_dir, output, loss_tags=None, lr_tags=None, title=None, dpi=100):
    """Draw the loss curve(s) (and the learning rate, when recorded) of the event files in
    ``log_dir`` into the PNG ``output``; returns ``output``.

    ``loss_tags``/``lr_tags``: the scalar tags to draw; by default every tag named like
    ``loss`` (``loss/auto``, ``train/loss``, ...) and like ``learning_rate``/``lr``. A
    truncated last record (a run still writing) is ignored; a corrupt one is an error.
    Raises ValueError when there is nothing to draw."""
    if not isinstance(output, (str, os.PathLike)):
        raise TypeError(f"output: expected a str or path, got {type(output).__name__}")
    for name, tags in (("loss_tags", loss_tags), ("lr_tags", lr_tags)):
        if tags is not None and (not isinstance(tags, (list, tuple)) or
                                 not all(isinstance(t, str) for t in tags)):
            raise TypeError(f"{name}: expected a list of str or None, got {tags!r}")
    files = event_files(log_dir)
    if not files:
        raise ValueError(f"log_dir: no event files (names containing 'tfevents') in "
                         f"{os.fspath(log_dir)!r}")
    scalars = load_summaries(log_dir, allow_truncated_tail=True)["scalar"]
    chosen_loss = [t for t in (loss_tags if loss_tags is not None else
                               [t for t in scalars if _matches(t, _LOSS_KEYS)]) if t in scalars]
    chosen_lr = [t for t in (lr_tags if lr_tags is not None else
                             [t for t in scalars if _matches(t, _LR_KEYS)]) if t in scalars]
    if not chosen_loss and not chosen_lr:
        raise ValueError(f"log_dir: no loss or learning-rate scalars in {os.fspath(log_dir)!r}"
                         f" (scalar tags found: {sorted(scalars) or 'none'})")

    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    panels = [(tags, label) for tags, label in ((chosen_loss, "loss"),
                                                 (chosen_lr, "learning rate")) if tags]
    fig = Figure(figsize=(8, 3.2 * len(panels)), dpi=dpi)
    FigureCanvasAgg(fig)
    axes = fig.subplots(len(panels), 1, sharex=True, squeeze=False)[:, 0]
    for ax, (tags, label) in zip(axes, panels):
        for tag in tags:
            steps, values = _series(scalars[tag])
            ax.plot(steps, values, marker="." if len(steps) < 50 else None, label=tag)
        ax.set_ylabel(label)
        ax.grid(True, alpha=0.3)
        ax.legend(loc="best", fontsize="small")
    axes[-1].set_xlabel("step")
    fig.suptitle(title or os.path.basename(os.path.abspath(os.fspath(log_dir))))
    fig.tight_layout()
    fig.savefig(output, format="png")
    return output


def main(argv=None) -> int:
    """``mscore plot LOG_DIR [-o loss.png] [--loss-tag T ...] [--lr-tag T ...]``; returns the
    exit status (0 on success, 1 when nothing could be drawn or a file is corrupt)."""
    parser = argparse.ArgumentParser(
        prog="mscore plot",
        description="Draw the loss and learning-rate curves of a summary directory "
                    "(SummaryRecord / SummaryCollector output) as a PNG.")
    parser.add_argument("log_dir", help="directory holding the event files (or one file)")
    parser.add_argument("-o", "--output", default="loss.png", help="PNG file to write "
                        "(default: loss.png)")
    parser.add_argument("--loss-tag", action="append", dest="loss_tags", metavar="TAG",
                        help="scalar tag to draw as loss (repeatable; default: tags named "
                             "like 'loss')")
    parser.add_argument("--lr-tag", action="append", dest="lr_tags", metavar="TAG",
                        help="scalar tag to draw as learning rate (repeatable)")
    parser.add_argument("--title", default=None, help="figure title")
    args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    try:
        path = plot_summary(args.log_dir, args.output, loss_tags=args.loss_tags,
                            lr_tags=args.lr_tags, title=args.title)
    except (ValueError, OSError, CorruptRecordError) as exc:
        print(f"mscore plot: error: {exc}", file=sys.stderr)
        return 1
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
