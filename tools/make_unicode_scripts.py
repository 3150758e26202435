"""Write ``mscore/dataset/text/_unicode_script_ranges.py``: the Unicode Script property (the
four-letter ISO 15924 code of each code point, from the Unicode Character Database's
Scripts.txt) as sorted range starts, for ``text.UnicodeScriptTokenizer``.

The database is read through fontTools (a dependency of matplotlib, in the test extra):

    python tools/make_unicode_scripts.py
"""
import os
import textwrap

from fontTools.unicodedata import Scripts

HEADER = '''"""The Unicode Script property (ISO 15924 codes) by code point range:
``"START:CODE"`` items (START in hex) where the script changes, written by
``tools/make_unicode_scripts.py`` from the Unicode Character Database; do not edit."""

'''


def packed_ranges():
    """``"START:CODE"`` items (START in hex) where the script changes, in code point order."""
    items, last = [], None
    for start, code in zip(Scripts.RANGES, Scripts.VALUES):
        code = code or "Zzzz"
        if code != last:
            items.append(f"{start:X}:{code}")
            last = code
    return items


def main():
    body = textwrap.fill(" ".join(packed_ranges()), width=92, break_on_hyphens=False)
    lines = "\n".join(f"    {line + ' '!r}" for line in body.split("\n"))
    here = os.path.dirname(os.path.abspath(__file__))
    target = os.path.join(here, "..", "mscore", "dataset", "text", "_unicode_script_ranges.py")
    with open(target, "w", encoding="utf-8") as f:
        f.write(HEADER + "PACKED = (\n" + lines + "\n)\n")

if __name__ == "__main__":
    main()
