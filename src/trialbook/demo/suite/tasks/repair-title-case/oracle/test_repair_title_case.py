import unittest

from titles import title_case


class TestTitle(unittest.TestCase):
    def test_small_words(self):
        self.assertEqual(title_case('the lord of the rings'), 'The Lord of the Rings')
