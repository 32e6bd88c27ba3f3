import os
import sys
import unittest

# The grader runs `python -I` from the oracle folder: the workspace goes LAST on sys.path, so
# nothing the agent wrote can stand in for the standard library or the test runner.
sys.path.append(os.getcwd())

from palindrome import is_palindrome  # noqa: E402


class TestPalindrome(unittest.TestCase):
    def test_words(self):
        self.assertTrue(is_palindrome('Racecar'))
        self.assertFalse(is_palindrome('python'))

    def test_sentence(self):
        self.assertTrue(is_palindrome('A man, a plan, a canal: Panama'))

    def test_empty(self):
        self.assertTrue(is_palindrome(''))
