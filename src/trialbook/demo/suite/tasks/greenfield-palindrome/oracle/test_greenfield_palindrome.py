import unittest

from palindrome import is_palindrome


class TestPalindrome(unittest.TestCase):
    def test_words(self):
        self.assertTrue(is_palindrome('Racecar'))
        self.assertFalse(is_palindrome('python'))

    def test_sentence(self):
        self.assertTrue(is_palindrome('A man, a plan, a canal: Panama'))

    def test_empty(self):
        self.assertTrue(is_palindrome(''))
