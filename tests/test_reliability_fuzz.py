"""Every file type mscore reads, fuzzed: malformed inputs load or raise a
``ValueError`` naming the file -- no library exception leaks, nothing empty is accepted.

The default run feeds a seeded sample of ``SAMPLE`` inputs per file type; with
``MSCORE_SLOW_TESTS=1`` it feeds 1000 per type. The engine is ``bench/fuzz_loaders.py``
(run it directly for other counts and seeds)."""
import importlib.util
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SAMPLE = 60
FULL = 1000


def _engine():
    spec = importlib.util.spec_from_file_location(
        "fuzz_loaders", os.path.join(ROOT, "bench", "fuzz_loaders.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ENGINE = _engine()


@pytest.mark.parametrize("kind", ENGINE.TYPES)
def test_malformed_files_never_leak_a_library_exception(tmp_path, kind):
    count = FULL if os.environ.get("MSCORE_SLOW_TESTS") else SAMPLE
    stats = ENGINE.fuzz(kind, count, seed=0, folder=str(tmp_path))
    assert stats["inputs"] == count
    assert stats["leaks"] == [], stats["leaks"][:5]
    assert stats["refused"] > 0 and stats["loaded"] + stats["refused"] == count


def test_the_mutations_reach_past_the_checksums(tmp_path):
    # a sanity check of the engine: content-level mutations of event files and .gz files
    # produce inputs whose checksums hold, so the parsers behind them are exercised
    import gzip
    import random
    import zlib

    from mscore.train.summary.reader import iter_records
    rng = random.Random(1)
    seeds = ENGINE.SEEDS["events"](str(tmp_path))
    framed_ok = 0
    for _ in range(40):
        path = tmp_path / "events.out.tfevents.0.x"
        path.write_bytes(ENGINE._mutate_events(seeds[0], rng, str(tmp_path)))
        try:
            list(iter_records(str(path)))
            framed_ok += 1
        except ValueError:
            pass
    assert framed_ok >= 10
    gz_ok = 0
    for _ in range(40):
        try:
            gzip.decompress(ENGINE._mutate_gz(ENGINE.SEEDS["idx.gz"](str(tmp_path))[0], rng))
            gz_ok += 1
        except (OSError, EOFError, zlib.error):
            pass
    assert gz_ok >= 10
