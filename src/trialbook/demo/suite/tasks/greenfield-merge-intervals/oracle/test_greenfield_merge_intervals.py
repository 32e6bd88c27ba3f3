import os
import sys
import unittest

# The grader runs `python -I` from the oracle folder: the workspace goes LAST on sys.path, so
# nothing the agent wrote can stand in for the standard library or the test runner.
sys.path.append(os.getcwd())

from intervals import merge  # noqa: E402


class TestMerge(unittest.TestCase):
    def test_sorted(self):
        self.assertEqual(merge([(1, 3), (2, 6), (8, 10)]), [(1, 6), (8, 10)])

    def test_unsorted(self):
        self.assertEqual(merge([(8, 10), (1, 3), (2, 6)]), [(1, 6), (8, 10)])

    def test_touching(self):
        self.assertEqual(merge([(1, 2), (2, 3)]), [(1, 3)])
