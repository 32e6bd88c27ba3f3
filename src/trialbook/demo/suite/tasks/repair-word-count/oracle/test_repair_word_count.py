import os
import sys
import unittest

# The grader runs `python -I` from the oracle folder: the workspace goes LAST on sys.path, so
# nothing the agent wrote can stand in for the standard library or the test runner.
sys.path.append(os.getcwd())

from words import count_words  # noqa: E402


class TestCount(unittest.TestCase):
    def test_plain(self):
        self.assertEqual(count_words('one two three'), 3)

    def test_spacing(self):
        self.assertEqual(count_words('  one   two\tthree\n'), 3)

    def test_blank(self):
        self.assertEqual(count_words(''), 0)
        self.assertEqual(count_words('   '), 0)
