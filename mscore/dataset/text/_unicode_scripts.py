"""The Unicode Script property of a character (``script_of``), from the ranges that
``tools/make_unicode_scripts.py`` writes into ``_unicode_script_ranges.py``."""
import bisect

from mscore.dataset.text._unicode_script_ranges import PACKED

_STARTS, _CODES = [], []
for _item in "".join(PACKED).split():
    _start, _code = _item.split(":")
    _STARTS.append(int(_start, 16))
    _CODES.append(_code)


def script_of(char):
    """The four-letter script code of ``char`` (``Zyyy`` common, ``Zinh`` inherited,
    ``Zzzz`` unassigned)."""
    return _CODES[bisect.bisect_right(_STARTS, ord(char)) - 1]
