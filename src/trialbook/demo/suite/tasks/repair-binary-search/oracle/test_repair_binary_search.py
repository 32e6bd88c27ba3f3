import os
import sys
import unittest

# The grader runs `python -I` from the oracle folder: the workspace goes LAST on sys.path, so
# nothing the agent wrote can stand in for the standard library or the test runner.
sys.path.append(os.getcwd())

from search import find  # noqa: E402


class TestFind(unittest.TestCase):
    def test_every_position(self):
        items = [1, 3, 5, 7, 9, 11]
        for i, x in enumerate(items):
            self.assertEqual(find(items, x), i)

    def test_missing(self):
        self.assertEqual(find([1, 3, 5], 4), -1)
        self.assertEqual(find([], 4), -1)

    def test_single(self):
        self.assertEqual(find([8], 8), 0)
