import unittest

from money import format_price


class TestPrice(unittest.TestCase):
    def test_positive(self):
        self.assertEqual(format_price(105), '$1.05')
        self.assertEqual(format_price(0), '$0.00')

    def test_negative(self):
        self.assertEqual(format_price(-105), '-$1.05')
        self.assertEqual(format_price(-5), '-$0.05')
