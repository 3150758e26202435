"""``mscore plot LOG_DIR -o loss.png``: loss and learning-rate curves of every summary run under
a folder, each run its own curve.

A run is a folder holding event files (what one ``SummaryRecord`` / ``SummaryCollector``
wrote; TensorBoard calls it a run too). Uses matplotlib's Agg canvas directly (no pyplot), so
it changes no global plotting state and needs no display.
"""
from __future__ import annotations

import json
import os
import sys

from mscore.commands import ArgumentParser, CommandError, command
from mscore.train.summary.reader import CorruptRecordError, event_files, load_summaries

HELP = "draw the loss curves of every summary run in a folder into a PNG"
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


def find_runs(log_dir):
    """``[(name, folder)]`` of every folder at or under ``log_dir`` that holds event files,
    sorted by name; ``name`` is the folder relative to ``log_dir`` (its own name for
    ``log_dir`` itself). A path to one event file is one run."""
    if not isinstance(log_dir, (str, os.PathLike)):
        raise TypeError(f"log_dir: expected a str or path, got {type(log_dir).__name__}")
    log_dir = os.fspath(log_dir)
    own_name = os.path.basename(os.path.abspath(log_dir))
    if os.path.isfile(log_dir):
        return [(own_name, log_dir)]
    if not os.path.isdir(log_dir):
        raise ValueError(f"log_dir: {log_dir!r} is neither a directory nor a file")
    runs = []
    for folder, dirs, _ in os.walk(log_dir):
        dirs.sort()
        if event_files(folder):
            rel = os.path.relpath(folder, log_dir)
            runs.append((own_name if rel == os.curdir else rel.replace(os.sep, "/"), folder))
    return sorted(runs)


def train_lineage(folder):
    """The last ``train_lineage`` record of the lineage files in ``folder`` (what
    ``SummaryCollector`` wrote about the network, optimizer and loss), or ``{}``."""
    if not os.path.isdir(folder):
        return {}
    found = {}
    for name in sorted(os.listdir(folder)):
        if ".lineage." not in name or not name.endswith(".jsonl"):
            continue
        try:
            with open(os.path.join(folder, name), encoding="utf-8") as f:
                for line in f:
                    record = json.loads(line)
                    if isinstance(record, dict) and record.get("plugin") == "train_lineage" \
                            and isinstance(record.get("value"), dict):
                        found = record["value"]
        except (OSError, ValueError, RecursionError):
            # a lineage file still being written, or not one mscore wrote (nested too deep
            # for the parser): no title from it
            continue
    return found


def describe_training(lineages):
    """A title from train lineage records: the network, optimizer and loss every run shares
    (``"Network, Momentum, CrossEntropyLoss"``), or None."""
    parts = []
    for key in ("network", "optimizer", "loss_function"):
        values = [lin.get(key) for lin in lineages]
        # a name is a string; anything else (a list, a dict) is not a name to show
        if values and all(isinstance(v, str) for v in values) and len(set(values)) == 1:
            parts.append(values[0])
    return ", ".join(parts) or None


def plot_summary(log_dir, output, loss_tags=None, lr_tags=None, title=None, dpi=100):
    """Draw the loss curve(s) (and the learning rate, when recorded) of every run under
    ``log_dir`` (see :func:`find_runs`) into the PNG ``output``, each run its own curve;
    returns ``output``.

    ``loss_tags``/``lr_tags``: the scalar tags to draw; by default every tag named like
    ``loss`` (``loss/auto``, ``train/loss``, ...) and like ``learning_rate``/``lr``. ``title``:
    by default what was trained (network, optimizer, loss function, from the runs' lineage),
    else the folder's name. A truncated last record (a run still writing) is ignored; a
    corrupt one is an error. Raises ValueError when there is nothing to draw."""
    if not isinstance(output, (str, os.PathLike)):
        raise TypeError(f"output: expected a str or path, got {type(output).__name__}")
    for name, tags in (("loss_tags", loss_tags), ("lr_tags", lr_tags)):
        if tags is not None and (not isinstance(tags, (list, tuple)) or
                                 not all(isinstance(t, str) for t in tags)):
            raise TypeError(f"{name}: expected a list of str or None, got {tags!r}")
    runs = find_runs(log_dir)
    if not runs:
        raise ValueError(f"log_dir: no event files (names containing 'tfevents') in "
                         f"{os.fspath(log_dir)!r} or its sub-folders")
    curves = {"loss": [], "learning rate": []}     # panel -> [(label, steps, values)]
    found_tags = set()
    for run, folder in runs:
        scalars = load_summaries(folder, allow_truncated_tail=True)["scalar"]
        found_tags.update(scalars)
        for panel, tags, keys in (("loss", loss_tags, _LOSS_KEYS),
                                  ("learning rate", lr_tags, _LR_KEYS)):
            chosen = [t for t in (tags if tags is not None else
                                  [t for t in scalars if _matches(t, keys)]) if t in scalars]
            for tag in chosen:
                label = tag if len(runs) == 1 else (run if len(chosen) == 1 else
                                                    f"{run}: {tag}")
                curves[panel].append((label, *_series(scalars[tag])))
    panels = [(label, lines) for label, lines in curves.items() if lines]
    if not panels:
        raise ValueError(f"log_dir: no loss or learning-rate scalars in {os.fspath(log_dir)!r}"
                         f" (scalar tags found: {sorted(found_tags) or 'none'})")
    if title is None:
        title = describe_training([train_lineage(folder) for _, folder in runs]) or \
            os.path.basename(os.path.abspath(os.fspath(log_dir)))
    _draw(panels, output, title, dpi)
    return output


def _draw(panels, output, title, dpi):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(8, 3.2 * len(panels)), dpi=dpi)
    FigureCanvasAgg(fig)
    axes = fig.subplots(len(panels), 1, sharex=True, squeeze=False)[:, 0]
    for ax, (ylabel, lines) in zip(axes, panels):
        for label, steps, values in lines:
            ax.plot(steps, values, marker="." if len(steps) < 50 else None, label=label)
        ax.set_ylabel(ylabel)
        ax.grid(True, alpha=0.3)
        ax.legend(loc="best", fontsize="small")
    axes[-1].set_xlabel("step")
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(output, format="png")


def _parser():
    parser = ArgumentParser(
        prog="mscore plot",
        description="Draw the loss and learning-rate curves of every summary run (a folder "
                    "of event files written by SummaryRecord / SummaryCollector) at or under "
                    "LOG_DIR into a PNG, each run its own curve.")
    parser.add_argument("log_dir", help="folder holding the runs (or one event file)")
    parser.add_argument("-o", "--output", default="loss.png", help="PNG file to write "
                        "(default: loss.png)")
    parser.add_argument("--loss-tag", action="append", dest="loss_tags", metavar="TAG",
                        help="scalar tag to draw as loss (repeatable; default: tags named "
                             "like 'loss')")
    parser.add_argument("--lr-tag", action="append", dest="lr_tags", metavar="TAG",
                        help="scalar tag to draw as learning rate (repeatable)")
    parser.add_argument("--title", default=None,
                        help="figure title (default: what was trained, from the lineage)")
    return parser


@command("mscore plot")
def main(argv=None) -> int:
    """``mscore plot LOG_DIR [-o loss.png] [--loss-tag T ...] [--lr-tag T ...]``; returns the
    exit status (0 on success, 2 when nothing could be drawn or a file is corrupt)."""
    args = _parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise CommandError("drawing needs matplotlib: pip install matplotlib") from None
    try:
        path = plot_summary(args.log_dir, args.output, loss_tags=args.loss_tags,
                            lr_tags=args.lr_tags, title=args.title)
    except (ValueError, OSError, CorruptRecordError) as exc:
        raise CommandError(str(exc)) from None
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
