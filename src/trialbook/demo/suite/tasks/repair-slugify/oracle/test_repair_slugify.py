import unittest

from text import slugify


class TestSlugify(unittest.TestCase):
    def test_simple(self):
        self.assertEqual(slugify('Hello World'), 'hello-world')

    def test_runs(self):
        self.assertEqual(slugify('a  --  b'), 'a-b')

    def test_ends(self):
        self.assertEqual(slugify('  Big News!  '), 'big-news')
