import unittest

from rle import encode


class TestEncode(unittest.TestCase):
    def test_runs(self):
        self.assertEqual(encode('aaabcc'), 'a3b1c2')

    def test_single(self):
        self.assertEqual(encode('z'), 'z1')

    def test_empty(self):
        self.assertEqual(encode(''), '')
