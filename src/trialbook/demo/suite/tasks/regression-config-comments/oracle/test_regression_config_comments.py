import os
import sys
import unittest

# The grader runs `python -I` from the oracle folder: the workspace goes LAST on sys.path, so
# nothing the agent wrote can stand in for the standard library or the test runner.
sys.path.append(os.getcwd())

from config import parse  # noqa: E402


class ExistingBehaviourKept(unittest.TestCase):
    def test_pairs(self):
        self.assertEqual(parse('a = 1\nb=2'), {'a': '1', 'b': '2'})

    def test_hash_in_value(self):
        self.assertEqual(parse('color = #ff0000'), {'color': '#ff0000'})


class RequestedChange(unittest.TestCase):
    def test_comments(self):
        self.assertEqual(parse('# note\n  # indented\nx=1'), {'x': '1'})
