"""The bundled demo suite, defined once: each task's buggy or stub fixture, its oracle tests, the
correct fix and a plausible wrong one.

``build_suite`` writes the suite folder from these definitions (fixture/, oracle/, and for
grader-check a reference/ with the correct fix and decoys/plausible/ with the wrong one). The
simulated agents apply the same edits to their workspace. A test checks that the folder committed
under ``demo/suite`` is exactly what ``build_suite`` writes, and grader-check proves on every task
that the fixture fails, the reference passes and the decoy fails.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

__all__ = ["DEMO_TASKS", "DemoTask", "apply_edits", "build_suite"]

Edit = tuple[str, str, str]
"""(file, old text, new text): replace the first occurrence."""

GRADER = 'python -m unittest discover -s "$TRIALBOOK_ORACLE_DIR" -p "test_*.py"'


@dataclass(frozen=True)
class DemoTask:
    """One small real task."""

    id: str
    stratum: str
    prompt: str
    files: dict[str, str]
    test: str
    fix: tuple[Edit, ...]
    wrong: tuple[Edit, ...]
    ease: float
    """How often the simulated baseline applies the correct fix (the candidate a little more)."""
    extra_fixture: dict[str, str] | None = None


def apply_edits(files: dict[str, str], edits: tuple[Edit, ...]) -> dict[str, str]:
    """The files after the edits; an edit whose old text is absent is a bug in the definition."""
    out = dict(files)
    for name, old, new in edits:
        if old not in out[name]:
            raise ValueError(f"edit of {name}: {old!r} not found")
        out[name] = out[name].replace(old, new, 1)
    return out


DEMO_TASKS: tuple[DemoTask, ...] = (
    # ------------------------------------------------------------------ repair: fix a bug
    DemoTask(
        id="repair-median",
        stratum="repair",
        prompt="stats.py: median() gives the wrong answer for lists with an even number of items. "
        "Fix it so it returns the mean of the two middle values.",
        files={
            "stats.py": "def median(values):\n"
            "    ordered = sorted(values)\n"
            "    n = len(ordered)\n"
            "    if n == 0:\n"
            '        raise ValueError("median of nothing")\n'
            "    return ordered[n // 2]\n"
        },
        test="import unittest\n\nfrom stats import median\n\n\n"
        "class TestMedian(unittest.TestCase):\n"
        "    def test_odd(self):\n        self.assertEqual(median([3, 1, 2]), 2)\n\n"
        "    def test_even(self):\n        self.assertEqual(median([4, 1, 3, 2]), 2.5)\n\n"
        "    def test_even_odd_sum(self):\n        self.assertEqual(median([1, 2]), 1.5)\n\n"
        "    def test_empty(self):\n        with self.assertRaises(ValueError):\n            median([])\n",
        fix=(
            (
                "stats.py",
                "    return ordered[n // 2]\n",
                "    if n % 2:\n        return ordered[n // 2]\n"
                "    return (ordered[n // 2 - 1] + ordered[n // 2]) / 2\n",
            ),
        ),
        wrong=(
            (
                "stats.py",
                "    return ordered[n // 2]\n",
                "    if n % 2:\n        return ordered[n // 2]\n"
                "    return (ordered[n // 2 - 1] + ordered[n // 2]) // 2\n",
            ),
        ),
        ease=0.75,
    ),
    DemoTask(
        id="repair-slugify",
        stratum="repair",
        prompt="text.py: slugify() leaves repeated and trailing dashes (e.g. for 'a  b!'). "
        "Make it collapse runs of separators into one dash and strip dashes at both ends.",
        files={
            "text.py": "import re\n\n\n"
            "def slugify(title):\n"
            "    lowered = title.lower()\n"
            '    return re.sub(r"[^a-z0-9]", "-", lowered)\n'
        },
        test="import unittest\n\nfrom text import slugify\n\n\n"
        "class TestSlugify(unittest.TestCase):\n"
        "    def test_simple(self):\n        self.assertEqual(slugify('Hello World'), 'hello-world')\n\n"
        "    def test_runs(self):\n        self.assertEqual(slugify('a  --  b'), 'a-b')\n\n"
        "    def test_ends(self):\n        self.assertEqual(slugify('  Big News!  '), 'big-news')\n",
        fix=(
            (
                "text.py",
                '    return re.sub(r"[^a-z0-9]", "-", lowered)\n',
                '    return re.sub(r"[^a-z0-9]+", "-", lowered).strip("-")\n',
            ),
        ),
        wrong=(
            (
                "text.py",
                '    return re.sub(r"[^a-z0-9]", "-", lowered)\n',
                '    return re.sub(r"[^a-z0-9]+", "-", lowered)\n',
            ),
        ),
        ease=0.6,
    ),
    DemoTask(
        id="repair-binary-search",
        stratum="repair",
        prompt="search.py: find() misses the last element of the list. Fix the bounds.",
        files={
            "search.py": "def find(items, target):\n"
            '    """Index of target in the sorted list items, or -1."""\n'
            "    lo, hi = 0, len(items) - 1\n"
            "    while lo < hi:\n"
            "        mid = (lo + hi) // 2\n"
            "        if items[mid] == target:\n"
            "            return mid\n"
            "        if items[mid] < target:\n"
            "            lo = mid + 1\n"
            "        else:\n"
            "            hi = mid - 1\n"
            "    return -1\n"
        },
        test="import unittest\n\nfrom search import find\n\n\n"
        "class TestFind(unittest.TestCase):\n"
        "    def test_every_position(self):\n"
        "        items = [1, 3, 5, 7, 9, 11]\n"
        "        for i, x in enumerate(items):\n"
        "            self.assertEqual(find(items, x), i)\n\n"
        "    def test_missing(self):\n"
        "        self.assertEqual(find([1, 3, 5], 4), -1)\n"
        "        self.assertEqual(find([], 4), -1)\n\n"
        "    def test_single(self):\n        self.assertEqual(find([8], 8), 0)\n",
        fix=(("search.py", "    while lo < hi:\n", "    while lo <= hi:\n"),),
        wrong=(
            (
                "search.py",
                "    lo, hi = 0, len(items) - 1\n",
                "    lo, hi = 0, len(items)\n",
            ),
        ),
        ease=0.55,
    ),
    DemoTask(
        id="repair-duration",
        stratum="repair",
        prompt="duration.py: parse_duration('1h30m') returns far too many seconds. Fix the unit "
        "conversion for minutes.",
        files={
            "duration.py": "import re\n\n"
            'UNITS = {"h": 3600, "m": 3600, "s": 1}\n\n\n'
            "def parse_duration(text):\n"
            '    """Seconds in a duration such as 2h, 45m, 1h30m10s."""\n'
            "    total = 0\n"
            '    for amount, unit in re.findall(r"(\\d+)([hms])", text):\n'
            "        total += int(amount) * UNITS[unit]\n"
            "    return total\n"
        },
        test="import unittest\n\nfrom duration import parse_duration\n\n\n"
        "class TestDuration(unittest.TestCase):\n"
        "    def test_hours(self):\n        self.assertEqual(parse_duration('2h'), 7200)\n\n"
        "    def test_minutes(self):\n        self.assertEqual(parse_duration('45m'), 2700)\n\n"
        "    def test_mixed(self):\n        self.assertEqual(parse_duration('1h30m10s'), 5410)\n",
        fix=(("duration.py", '"m": 3600', '"m": 60'),),
        wrong=(("duration.py", '"h": 3600, "m": 3600', '"h": 60, "m": 60'),),
        ease=0.8,
    ),
    DemoTask(
        id="repair-word-count",
        stratum="repair",
        prompt="words.py: count_words() counts empty strings when words are separated by more than "
        "one space or by tabs and newlines. Fix it.",
        files={
            "words.py": 'def count_words(text):\n    return len(text.split(" ")) if text else 0\n'
        },
        test="import unittest\n\nfrom words import count_words\n\n\n"
        "class TestCount(unittest.TestCase):\n"
        "    def test_plain(self):\n        self.assertEqual(count_words('one two three'), 3)\n\n"
        "    def test_spacing(self):\n        self.assertEqual(count_words('  one   two\\tthree\\n'), 3)\n\n"
        "    def test_blank(self):\n"
        "        self.assertEqual(count_words(''), 0)\n"
        "        self.assertEqual(count_words('   '), 0)\n",
        fix=(("words.py", 'len(text.split(" ")) if text else 0', "len(text.split())"),),
        wrong=(
            (
                "words.py",
                'len(text.split(" ")) if text else 0',
                'len(text.strip().split(" ")) if text else 0',
            ),
        ),
        ease=0.7,
    ),
    DemoTask(
        id="repair-leap-year",
        stratum="repair",
        prompt="calendar_utils.py: is_leap() treats every year divisible by 4 as a leap year. "
        "Apply the full Gregorian rule.",
        files={"calendar_utils.py": "def is_leap(year):\n    return year % 4 == 0\n"},
        test="import unittest\n\nfrom calendar_utils import is_leap\n\n\n"
        "class TestLeap(unittest.TestCase):\n"
        "    def test_ordinary(self):\n"
        "        self.assertTrue(is_leap(2024))\n        self.assertFalse(is_leap(2023))\n\n"
        "    def test_centuries(self):\n"
        "        self.assertFalse(is_leap(1900))\n        self.assertTrue(is_leap(2000))\n",
        fix=(
            (
                "calendar_utils.py",
                "    return year % 4 == 0\n",
                "    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)\n",
            ),
        ),
        wrong=(
            (
                "calendar_utils.py",
                "    return year % 4 == 0\n",
                "    return year % 4 == 0 and year % 100 != 0\n",
            ),
        ),
        ease=0.8,
    ),
    DemoTask(
        id="repair-roman",
        stratum="repair",
        prompt="roman.py: to_roman(4) gives 'IIII'. Use subtractive notation (IV, IX, XL, XC, CD, CM).",
        files={
            "roman.py": "NUMERALS = [\n"
            '    (1000, "M"), (500, "D"), (100, "C"), (50, "L"), (10, "X"), (5, "V"), (1, "I"),\n'
            "]\n\n\n"
            "def to_roman(n):\n"
            '    out = ""\n'
            "    for value, letters in NUMERALS:\n"
            "        while n >= value:\n"
            "            out += letters\n"
            "            n -= value\n"
            "    return out\n"
        },
        test="import unittest\n\nfrom roman import to_roman\n\n\n"
        "class TestRoman(unittest.TestCase):\n"
        "    def test_small(self):\n"
        "        self.assertEqual([to_roman(i) for i in (1, 4, 9)], ['I', 'IV', 'IX'])\n\n"
        "    def test_tens(self):\n"
        "        self.assertEqual(to_roman(49), 'XLIX')\n"
        "        self.assertEqual(to_roman(94), 'XCIV')\n\n"
        "    def test_large(self):\n        self.assertEqual(to_roman(1994), 'MCMXCIV')\n",
        fix=(
            (
                "roman.py",
                '    (1000, "M"), (500, "D"), (100, "C"), (50, "L"), (10, "X"), (5, "V"), (1, "I"),\n',
                '    (1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"),\n'
                '    (50, "L"), (40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I"),\n',
            ),
        ),
        wrong=(
            (
                "roman.py",
                '(10, "X"), (5, "V"), (1, "I"),\n',
                '(10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I"),\n',
            ),
        ),
        ease=0.5,
    ),
    # ------------------------------------------------------------------ greenfield: write it
    DemoTask(
        id="greenfield-palindrome",
        stratum="greenfield",
        prompt="Implement is_palindrome(text) in palindrome.py: ignore case, spaces and punctuation.",
        files={
            "palindrome.py": "def is_palindrome(text):\n"
            '    raise NotImplementedError("is_palindrome")\n'
        },
        test="import unittest\n\nfrom palindrome import is_palindrome\n\n\n"
        "class TestPalindrome(unittest.TestCase):\n"
        "    def test_words(self):\n"
        "        self.assertTrue(is_palindrome('Racecar'))\n"
        "        self.assertFalse(is_palindrome('python'))\n\n"
        "    def test_sentence(self):\n"
        "        self.assertTrue(is_palindrome('A man, a plan, a canal: Panama'))\n\n"
        "    def test_empty(self):\n        self.assertTrue(is_palindrome(''))\n",
        fix=(
            (
                "palindrome.py",
                '    raise NotImplementedError("is_palindrome")\n',
                "    kept = [c.lower() for c in text if c.isalnum()]\n    return kept == kept[::-1]\n",
            ),
        ),
        wrong=(
            (
                "palindrome.py",
                '    raise NotImplementedError("is_palindrome")\n',
                '    kept = text.lower().replace(" ", "")\n    return kept == kept[::-1]\n',
            ),
        ),
        ease=0.7,
    ),
    DemoTask(
        id="greenfield-chunk",
        stratum="greenfield",
        prompt="Implement chunk(items, size) in chunks.py: split a list into lists of `size` items; "
        "the last one may be shorter. A size below 1 is a ValueError.",
        files={"chunks.py": "def chunk(items, size):\n    raise NotImplementedError\n"},
        test="import unittest\n\nfrom chunks import chunk\n\n\n"
        "class TestChunk(unittest.TestCase):\n"
        "    def test_even(self):\n        self.assertEqual(chunk([1, 2, 3, 4], 2), [[1, 2], [3, 4]])\n\n"
        "    def test_rest(self):\n        self.assertEqual(chunk([1, 2, 3, 4, 5], 2), [[1, 2], [3, 4], [5]])\n\n"
        "    def test_bad_size(self):\n"
        "        with self.assertRaises(ValueError):\n            chunk([1], 0)\n",
        fix=(
            (
                "chunks.py",
                "    raise NotImplementedError\n",
                "    if size < 1:\n        raise ValueError(size)\n"
                "    return [items[i : i + size] for i in range(0, len(items), size)]\n",
            ),
        ),
        wrong=(
            (
                "chunks.py",
                "    raise NotImplementedError\n",
                "    if size < 1:\n        raise ValueError(size)\n"
                "    return [items[i : i + size] for i in range(0, len(items) - size + 1, size)]\n",
            ),
        ),
        ease=0.75,
    ),
    DemoTask(
        id="greenfield-flatten",
        stratum="greenfield",
        prompt="Implement flatten(nested) in flat.py: a flat list of the non-list items of "
        "arbitrarily nested lists, in order.",
        files={"flat.py": "def flatten(nested):\n    raise NotImplementedError\n"},
        test="import unittest\n\nfrom flat import flatten\n\n\n"
        "class TestFlatten(unittest.TestCase):\n"
        "    def test_one_level(self):\n        self.assertEqual(flatten([1, [2, 3], 4]), [1, 2, 3, 4])\n\n"
        "    def test_deep(self):\n        self.assertEqual(flatten([[1, [2, [3, [4]]]], 5]), [1, 2, 3, 4, 5])\n\n"
        "    def test_empty(self):\n        self.assertEqual(flatten([[], [[]]]), [])\n",
        fix=(
            (
                "flat.py",
                "    raise NotImplementedError\n",
                "    out = []\n    for item in nested:\n"
                "        if isinstance(item, list):\n            out.extend(flatten(item))\n"
                "        else:\n            out.append(item)\n    return out\n",
            ),
        ),
        wrong=(
            (
                "flat.py",
                "    raise NotImplementedError\n",
                "    out = []\n    for item in nested:\n"
                "        if isinstance(item, list):\n            out.extend(item)\n"
                "        else:\n            out.append(item)\n    return out\n",
            ),
        ),
        ease=0.65,
    ),
    DemoTask(
        id="greenfield-rle",
        stratum="greenfield",
        prompt="Implement encode(text) in rle.py: run-length encoding, each character followed by "
        "the length of its run.",
        files={"rle.py": "def encode(text):\n    raise NotImplementedError\n"},
        test="import unittest\n\nfrom rle import encode\n\n\n"
        "class TestEncode(unittest.TestCase):\n"
        "    def test_runs(self):\n        self.assertEqual(encode('aaabcc'), 'a3b1c2')\n\n"
        "    def test_single(self):\n        self.assertEqual(encode('z'), 'z1')\n\n"
        "    def test_empty(self):\n        self.assertEqual(encode(''), '')\n",
        fix=(
            (
                "rle.py",
                "    raise NotImplementedError\n",
                "    import itertools\n\n"
                '    return "".join(f"{ch}{len(list(run))}" for ch, run in itertools.groupby(text))\n',
            ),
        ),
        wrong=(
            (
                "rle.py",
                "    raise NotImplementedError\n",
                '    out, count = "", 1\n'
                "    for a, b in zip(text, text[1:]):\n"
                "        if a == b:\n            count += 1\n"
                "        else:\n"
                '            out += f"{a}{count}"\n            count = 1\n'
                "    return out\n",
            ),
        ),
        ease=0.55,
    ),
    DemoTask(
        id="greenfield-snake-case",
        stratum="greenfield",
        prompt="Implement snake_case(name) in names.py: convert camelCase and PascalCase "
        "identifiers to snake_case.",
        files={"names.py": "def snake_case(name):\n    raise NotImplementedError\n"},
        test="import unittest\n\nfrom names import snake_case\n\n\n"
        "class TestSnake(unittest.TestCase):\n"
        "    def test_camel(self):\n        self.assertEqual(snake_case('parseValue'), 'parse_value')\n\n"
        "    def test_pascal(self):\n        self.assertEqual(snake_case('ParseValue'), 'parse_value')\n\n"
        "    def test_plain(self):\n        self.assertEqual(snake_case('value'), 'value')\n",
        fix=(
            (
                "names.py",
                "    raise NotImplementedError\n",
                '    import re\n\n    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()\n',
            ),
        ),
        wrong=(
            (
                "names.py",
                "    raise NotImplementedError\n",
                '    import re\n\n    return re.sub(r"(?=[A-Z])", "_", name).lower()\n',
            ),
        ),
        ease=0.5,
    ),
    DemoTask(
        id="greenfield-merge-intervals",
        stratum="greenfield",
        prompt="Implement merge(intervals) in intervals.py: merge overlapping (start, end) pairs; "
        "the input may be in any order; return them sorted.",
        files={"intervals.py": "def merge(intervals):\n    raise NotImplementedError\n"},
        test="import unittest\n\nfrom intervals import merge\n\n\n"
        "class TestMerge(unittest.TestCase):\n"
        "    def test_sorted(self):\n        self.assertEqual(merge([(1, 3), (2, 6), (8, 10)]), [(1, 6), (8, 10)])\n\n"
        "    def test_unsorted(self):\n        self.assertEqual(merge([(8, 10), (1, 3), (2, 6)]), [(1, 6), (8, 10)])\n\n"
        "    def test_touching(self):\n        self.assertEqual(merge([(1, 2), (2, 3)]), [(1, 3)])\n",
        fix=(
            (
                "intervals.py",
                "    raise NotImplementedError\n",
                "    out = []\n    for start, end in sorted(intervals):\n"
                "        if out and start <= out[-1][1]:\n"
                "            out[-1] = (out[-1][0], max(out[-1][1], end))\n"
                "        else:\n            out.append((start, end))\n    return out\n",
            ),
        ),
        wrong=(
            (
                "intervals.py",
                "    raise NotImplementedError\n",
                "    out = []\n    for start, end in intervals:\n"
                "        if out and start <= out[-1][1]:\n"
                "            out[-1] = (out[-1][0], max(out[-1][1], end))\n"
                "        else:\n            out.append((start, end))\n    return out\n",
            ),
        ),
        ease=0.6,
    ),
    DemoTask(
        id="greenfield-caesar",
        stratum="greenfield",
        prompt="Implement shift(text, k) in caesar.py: a Caesar cipher that keeps case, wraps "
        "around the alphabet and leaves other characters alone.",
        files={"caesar.py": "def shift(text, k):\n    raise NotImplementedError\n"},
        test="import unittest\n\nfrom caesar import shift\n\n\n"
        "class TestShift(unittest.TestCase):\n"
        "    def test_basic(self):\n        self.assertEqual(shift('abc', 1), 'bcd')\n\n"
        "    def test_wrap(self):\n        self.assertEqual(shift('xyz', 3), 'abc')\n\n"
        "    def test_case_and_other(self):\n        self.assertEqual(shift('Hi, Zed!', 1), 'Ij, Afe!')\n",
        fix=(
            (
                "caesar.py",
                "    raise NotImplementedError\n",
                "    out = []\n    for c in text:\n"
                "        if c.isalpha() and c.isascii():\n"
                '            base = ord("A") if c.isupper() else ord("a")\n'
                "            out.append(chr(base + (ord(c) - base + k) % 26))\n"
                "        else:\n            out.append(c)\n"
                '    return "".join(out)\n',
            ),
        ),
        wrong=(
            (
                "caesar.py",
                "    raise NotImplementedError\n",
                '    return "".join(chr(ord(c) + k) if c.isalpha() else c for c in text)\n',
            ),
        ),
        ease=0.7,
    ),
    # ------------------------------------------------------------------ regression: add, break nothing
    DemoTask(
        id="regression-config-comments",
        stratum="regression",
        prompt="config.py: let parse() skip comment lines that start with '#'. Existing behaviour "
        "must not change.",
        files={
            "config.py": "def parse(text):\n"
            "    settings = {}\n"
            "    for line in text.splitlines():\n"
            "        if not line.strip():\n"
            "            continue\n"
            '        key, _, value = line.partition("=")\n'
            "        settings[key.strip()] = value.strip()\n"
            "    return settings\n"
        },
        test="import unittest\n\nfrom config import parse\n\n\n"
        "class TestParse(unittest.TestCase):\n"
        "    def test_pairs(self):\n        self.assertEqual(parse('a = 1\\nb=2'), {'a': '1', 'b': '2'})\n\n"
        "    def test_hash_in_value(self):\n        self.assertEqual(parse('color = #ff0000'), {'color': '#ff0000'})\n\n"
        "    def test_comments(self):\n        self.assertEqual(parse('# note\\n  # indented\\nx=1'), {'x': '1'})\n",
        fix=(
            (
                "config.py",
                "        if not line.strip():\n",
                '        if not line.strip() or line.strip().startswith("#"):\n',
            ),
        ),
        wrong=(
            (
                "config.py",
                "    for line in text.splitlines():\n",
                '    for line in text.splitlines():\n        line = line.split("#")[0]\n',
            ),
        ),
        ease=0.6,
    ),
    DemoTask(
        id="regression-price-negative",
        stratum="regression",
        prompt="money.py: format_price() must also handle negative amounts of cents, with the minus "
        "sign before the currency symbol. Positive amounts must print as before.",
        files={
            "money.py": "def format_price(cents):\n"
            '    return f"${cents // 100}.{cents % 100:02d}"\n'
        },
        test="import unittest\n\nfrom money import format_price\n\n\n"
        "class TestPrice(unittest.TestCase):\n"
        "    def test_positive(self):\n"
        "        self.assertEqual(format_price(105), '$1.05')\n"
        "        self.assertEqual(format_price(0), '$0.00')\n\n"
        "    def test_negative(self):\n"
        "        self.assertEqual(format_price(-105), '-$1.05')\n"
        "        self.assertEqual(format_price(-5), '-$0.05')\n",
        fix=(
            (
                "money.py",
                '    return f"${cents // 100}.{cents % 100:02d}"\n',
                '    sign = "-" if cents < 0 else ""\n    cents = abs(cents)\n'
                '    return f"{sign}${cents // 100}.{cents % 100:02d}"\n',
            ),
        ),
        wrong=(
            (
                "money.py",
                '    return f"${cents // 100}.{cents % 100:02d}"\n',
                '    if cents < 0:\n        return "-" + format_price(-cents)\n'
                '    return f"${cents // 100}.{cents % 100:02d}".replace("$0.", "$.")\n',
            ),
        ),
        ease=0.7,
    ),
    DemoTask(
        id="regression-stack-peek",
        stratum="regression",
        prompt="stack.py: add Stack.peek() returning the top item without removing it "
        "(IndexError when empty).",
        files={
            "stack.py": "class Stack:\n"
            "    def __init__(self):\n        self._items = []\n\n"
            "    def push(self, item):\n        self._items.append(item)\n\n"
            "    def pop(self):\n        return self._items.pop()\n\n"
            "    def __len__(self):\n        return len(self._items)\n"
        },
        test="import unittest\n\nfrom stack import Stack\n\n\n"
        "class TestStack(unittest.TestCase):\n"
        "    def test_push_pop(self):\n"
        "        s = Stack()\n        s.push(1)\n        s.push(2)\n"
        "        self.assertEqual(s.pop(), 2)\n        self.assertEqual(len(s), 1)\n\n"
        "    def test_peek(self):\n"
        "        s = Stack()\n        s.push('x')\n"
        "        self.assertEqual(s.peek(), 'x')\n        self.assertEqual(len(s), 1)\n\n"
        "    def test_peek_empty(self):\n"
        "        with self.assertRaises(IndexError):\n            Stack().peek()\n",
        fix=(
            (
                "stack.py",
                "    def __len__(self):\n",
                "    def peek(self):\n        return self._items[-1]\n\n    def __len__(self):\n",
            ),
        ),
        wrong=(
            (
                "stack.py",
                "    def __len__(self):\n",
                "    def peek(self):\n        return self.pop()\n\n    def __len__(self):\n",
            ),
        ),
        ease=0.85,
    ),
    DemoTask(
        id="regression-csv-quotes",
        stratum="regression",
        prompt="csvline.py: split_line() must accept doubled quotes inside a quoted field as one "
        "literal quote character. Empty fields must still work.",
        files={
            "csvline.py": "def split_line(line):\n"
            "    fields, current, quoted = [], [], False\n"
            "    for ch in line:\n"
            "        if ch == '\"':\n"
            "            quoted = not quoted\n"
            "        elif ch == ',' and not quoted:\n"
            "            fields.append(''.join(current))\n"
            "            current = []\n"
            "        else:\n"
            "            current.append(ch)\n"
            "    fields.append(''.join(current))\n"
            "    return fields\n"
        },
        test="import unittest\n\nfrom csvline import split_line\n\n\n"
        "class TestSplit(unittest.TestCase):\n"
        "    def test_plain(self):\n        self.assertEqual(split_line('a,b,,d'), ['a', 'b', '', 'd'])\n\n"
        "    def test_quoted_comma(self):\n        self.assertEqual(split_line('\"x,y\",z'), ['x,y', 'z'])\n\n"
        "    def test_doubled_quote(self):\n"
        '        self.assertEqual(split_line(\'"say ""hi""",2\'), [\'say "hi"\', \'2\'])\n\n'
        "    def test_empty_quoted(self):\n        self.assertEqual(split_line('\"\",1'), ['', '1'])\n",
        fix=(
            (
                "csvline.py",
                "    for ch in line:\n        if ch == '\"':\n            quoted = not quoted\n",
                "    i = 0\n"
                "    while i < len(line):\n"
                "        ch = line[i]\n"
                "        i += 1\n"
                "        if ch == '\"' and quoted and line[i : i + 1] == '\"':\n"
                "            current.append('\"')\n"
                "            i += 1\n"
                "        elif ch == '\"':\n"
                "            quoted = not quoted\n",
            ),
        ),
        wrong=(
            (
                "csvline.py",
                "    for ch in line:\n",
                "    line = line.replace('\"\"', '\\x00')\n    for ch in line:\n",
            ),
            (
                "csvline.py",
                "    fields.append(''.join(current))\n    return fields\n",
                "    fields.append(''.join(current))\n"
                "    return [f.replace('\\x00', '\"') for f in fields]\n",
            ),
        ),
        ease=0.4,
    ),
    DemoTask(
        id="regression-paginate",
        stratum="regression",
        prompt="pages.py: add page_count(total, per_page), the number of pages paginate() produces "
        "(at least 1). paginate() must keep working.",
        files={
            "pages.py": "def paginate(items, page, per_page):\n"
            '    """Items of 1-based page `page`."""\n'
            "    start = (page - 1) * per_page\n"
            "    return items[start : start + per_page]\n"
        },
        test="import unittest\n\nfrom pages import page_count, paginate\n\n\n"
        "class TestPages(unittest.TestCase):\n"
        "    def test_paginate(self):\n"
        "        self.assertEqual(paginate(list(range(7)), 2, 3), [3, 4, 5])\n\n"
        "    def test_count(self):\n"
        "        self.assertEqual(page_count(7, 3), 3)\n"
        "        self.assertEqual(page_count(6, 3), 2)\n"
        "        self.assertEqual(page_count(0, 3), 1)\n",
        fix=(
            (
                "pages.py",
                "def paginate(",
                "def page_count(total, per_page):\n"
                "    return max(1, -(-total // per_page))\n\n\n"
                "def paginate(",
            ),
        ),
        wrong=(
            (
                "pages.py",
                "def paginate(",
                "def page_count(total, per_page):\n"
                "    return total // per_page + 1\n\n\n"
                "def paginate(",
            ),
        ),
        ease=0.65,
    ),
    DemoTask(
        id="regression-dedupe-key",
        stratum="regression",
        prompt="dedupe.py: give dedupe() an optional key function; items with equal keys count as "
        "duplicates. The first occurrence wins and order is kept, as now.",
        files={
            "dedupe.py": "def dedupe(items):\n"
            "    seen, out = set(), []\n"
            "    for item in items:\n"
            "        if item not in seen:\n"
            "            seen.add(item)\n"
            "            out.append(item)\n"
            "    return out\n"
        },
        test="import unittest\n\nfrom dedupe import dedupe\n\n\n"
        "class TestDedupe(unittest.TestCase):\n"
        "    def test_order(self):\n        self.assertEqual(dedupe([3, 1, 3, 2, 1]), [3, 1, 2])\n\n"
        "    def test_key(self):\n"
        "        self.assertEqual(dedupe(['a', 'B', 'A', 'b'], key=str.lower), ['a', 'B'])\n",
        fix=(
            ("dedupe.py", "def dedupe(items):\n", "def dedupe(items, key=None):\n"),
            (
                "dedupe.py",
                "        if item not in seen:\n            seen.add(item)\n",
                "        k = item if key is None else key(item)\n"
                "        if k not in seen:\n            seen.add(k)\n",
            ),
        ),
        wrong=(
            ("dedupe.py", "def dedupe(items):\n", "def dedupe(items, key=None):\n"),
            (
                "dedupe.py",
                "    seen, out = set(), []\n",
                "    if key is not None:\n"
                "        return list({key(i): i for i in items}.values())\n"
                "    seen, out = set(), []\n",
            ),
        ),
        ease=0.55,
    ),
    DemoTask(
        id="regression-cache-ttl",
        stratum="regression",
        prompt="cache.py: let Cache.set() take an optional ttl in seconds; an entry older than its ttl "
        "is gone. Entries without a ttl never expire. The clock is injected for testing.",
        files={
            "cache.py": "import time\n\n\n"
            "class Cache:\n"
            "    def __init__(self, clock=time.monotonic):\n"
            "        self._clock = clock\n"
            "        self._data = {}\n\n"
            "    def set(self, key, value):\n"
            "        self._data[key] = value\n\n"
            "    def get(self, key, default=None):\n"
            "        return self._data.get(key, default)\n"
        },
        test="import unittest\n\nfrom cache import Cache\n\n\n"
        "class Clock:\n    now = 0.0\n\n    def __call__(self):\n        return self.now\n\n\n"
        "class TestCache(unittest.TestCase):\n"
        "    def test_plain(self):\n"
        "        c = Cache(Clock())\n        c.set('a', 1)\n        self.assertEqual(c.get('a'), 1)\n\n"
        "    def test_ttl(self):\n"
        "        clock = Clock()\n        c = Cache(clock)\n        c.set('a', 1, ttl=10)\n"
        "        clock.now = 9.5\n        self.assertEqual(c.get('a'), 1)\n"
        "        clock.now = 10.5\n        self.assertIsNone(c.get('a'))\n\n"
        "    def test_no_ttl_never_expires(self):\n"
        "        clock = Clock()\n        c = Cache(clock)\n        c.set('a', 1)\n"
        "        clock.now = 1e9\n        self.assertEqual(c.get('a'), 1)\n",
        fix=(
            (
                "cache.py",
                "    def set(self, key, value):\n        self._data[key] = value\n",
                "    def set(self, key, value, ttl=None):\n"
                "        expires = None if ttl is None else self._clock() + ttl\n"
                "        self._data[key] = (value, expires)\n",
            ),
            (
                "cache.py",
                "        return self._data.get(key, default)\n",
                "        if key not in self._data:\n            return default\n"
                "        value, expires = self._data[key]\n"
                "        if expires is not None and self._clock() >= expires:\n"
                "            return default\n"
                "        return value\n",
            ),
        ),
        wrong=(
            (
                "cache.py",
                "    def set(self, key, value):\n        self._data[key] = value\n",
                "    def set(self, key, value, ttl=0):\n"
                "        self._data[key] = (value, self._clock() + ttl)\n",
            ),
            (
                "cache.py",
                "        return self._data.get(key, default)\n",
                "        if key not in self._data:\n            return default\n"
                "        value, expires = self._data[key]\n"
                "        return default if self._clock() >= expires else value\n",
            ),
        ),
        ease=0.45,
    ),
    # ------------------------------------------------------------------ a task whose oracle leaked
    DemoTask(
        id="repair-title-case",
        stratum="repair",
        prompt="titles.py: title_case() capitalises small words such as 'of' in the middle of a "
        "title. Keep them lower case unless they come first.",
        files={
            "titles.py": 'SMALL = {"a", "an", "and", "of", "the", "in", "on"}\n\n\n'
            "def title_case(text):\n"
            "    return text.title()\n"
        },
        extra_fixture={
            # Someone copied the hidden test into the fixture: freeze must quarantine this task.
            "NOTES.md": "Reviewer notes. The check we will run:\n\n"
            "    self.assertEqual(title_case('the lord of the rings'), 'The Lord of the Rings')\n"
        },
        test="import unittest\n\nfrom titles import title_case\n\n\n"
        "class TestTitle(unittest.TestCase):\n"
        "    def test_small_words(self):\n"
        "        self.assertEqual(title_case('the lord of the rings'), 'The Lord of the Rings')\n",
        fix=(
            (
                "titles.py",
                "    return text.title()\n",
                "    words = text.split()\n"
                "    return ' '.join(\n"
                "        w if i and w in SMALL else w.capitalize() for i, w in enumerate(words)\n"
                "    )\n",
            ),
        ),
        wrong=(("titles.py", "    return text.title()\n", "    return text.capitalize()\n"),),
        ease=0.6,
    ),
)


SUITE_TOML = """# The bundled demo suite: small real Python tasks in three strata. Generated by
# trialbook.demo._tasks.build_suite (a test checks this folder matches it); freeze after changes.
name = "trialbook-demo"
description = "21 small Python tasks (repair / greenfield / regression) plus one with a leaked oracle"
k = 5
timeout_s = 6
grader_timeout_s = 30
temperature = 0.7
seeds = [11, 12, 13, 14, 15]
strata = ["repair", "greenfield", "regression"]
grader_version = "unittest-oracles-1"

[tiers]
smoke = ["repair-median", "greenfield-chunk", "regression-stack-peek"]
"""


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def build_suite(root: Path) -> Path:
    """Write the suite folder (replacing ``root/tasks`` and ``suite.toml``; the lock is left alone)."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "suite.toml").write_text(SUITE_TOML)
    shutil.rmtree(root / "tasks", ignore_errors=True)
    for task in DEMO_TASKS:
        tdir = root / "tasks" / task.id
        tdir.mkdir(parents=True)
        (tdir / "task.toml").write_text(
            f"prompt = {_toml_string(task.prompt)}\n"
            f"grader = {_toml_string(GRADER)}\n"
            f'stratum = "{task.stratum}"\n'
        )
        _write(tdir / "fixture", {**task.files, **(task.extra_fixture or {})})
        _write(tdir / "oracle", {f"test_{task.id.replace('-', '_')}.py": task.test})
        _write(tdir / "reference", apply_edits(task.files, task.fix))
        _write(tdir / "decoys" / "plausible", apply_edits(task.files, task.wrong))
    return root


def _toml_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
