import os
import sys
import unittest

# The grader runs `python -I` from the oracle folder: the workspace goes LAST on sys.path, so
# nothing the agent wrote can stand in for the standard library or the test runner.
sys.path.append(os.getcwd())

from roman import to_roman  # noqa: E402


class TestRoman(unittest.TestCase):
    def test_small(self):
        self.assertEqual([to_roman(i) for i in (1, 4, 9)], ['I', 'IV', 'IX'])

    def test_tens(self):
        self.assertEqual(to_roman(49), 'XLIX')
        self.assertEqual(to_roman(94), 'XCIV')

    def test_large(self):
        self.assertEqual(to_roman(1994), 'MCMXCIV')
