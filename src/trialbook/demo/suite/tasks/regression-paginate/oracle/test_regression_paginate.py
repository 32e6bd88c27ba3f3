import os
import sys
import unittest

# The grader runs `python -I` from the oracle folder: the workspace goes LAST on sys.path, so
# nothing the agent wrote can stand in for the standard library or the test runner.
sys.path.append(os.getcwd())

from pages import page_count, paginate  # noqa: E402


class ExistingBehaviourKept(unittest.TestCase):
    def test_paginate(self):
        self.assertEqual(paginate(list(range(7)), 2, 3), [3, 4, 5])


class RequestedChange(unittest.TestCase):
    def test_count(self):
        self.assertEqual(page_count(7, 3), 3)
        self.assertEqual(page_count(6, 3), 2)
        self.assertEqual(page_count(0, 3), 1)
