import os
import sys
import unittest

# The grader runs `python -I` from the oracle folder: the workspace goes LAST on sys.path, so
# nothing the agent wrote can stand in for the standard library or the test runner.
sys.path.append(os.getcwd())

from titles import title_case  # noqa: E402


class TestTitle(unittest.TestCase):
    def test_small_words(self):
        self.assertEqual(title_case('the lord of the rings'), 'The Lord of the Rings')
