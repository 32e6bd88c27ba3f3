import unittest

from dedupe import dedupe


class TestDedupe(unittest.TestCase):
    def test_order(self):
        self.assertEqual(dedupe([3, 1, 3, 2, 1]), [3, 1, 2])

    def test_key(self):
        self.assertEqual(dedupe(['a', 'B', 'A', 'b'], key=str.lower), ['a', 'B'])
