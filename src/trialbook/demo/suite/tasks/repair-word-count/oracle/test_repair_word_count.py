import unittest

from words import count_words


class TestCount(unittest.TestCase):
    def test_plain(self):
        self.assertEqual(count_words('one two three'), 3)

    def test_spacing(self):
        self.assertEqual(count_words('  one   two\tthree\n'), 3)

    def test_blank(self):
        self.assertEqual(count_words(''), 0)
        self.assertEqual(count_words('   '), 0)
