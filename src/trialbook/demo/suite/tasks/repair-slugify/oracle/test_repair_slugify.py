import os
import sys
import unittest

# The grader runs `python -I` from the oracle folder: the workspace goes LAST on sys.path, so
# nothing the agent wrote can stand in for the standard library or the test runner.
sys.path.append(os.getcwd())

from text import slugify  # noqa: E402


class TestSlugify(unittest.TestCase):
    def test_simple(self):
        self.assertEqual(slugify('Hello World'), 'hello-world')

    def test_runs(self):
        self.assertEqual(slugify('a  --  b'), 'a-b')

    def test_ends(self):
        self.assertEqual(slugify('  Big News!  '), 'big-news')
