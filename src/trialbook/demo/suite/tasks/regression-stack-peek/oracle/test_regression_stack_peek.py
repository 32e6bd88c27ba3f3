import unittest

from stack import Stack


class TestStack(unittest.TestCase):
    def test_push_pop(self):
        s = Stack()
        s.push(1)
        s.push(2)
        self.assertEqual(s.pop(), 2)
        self.assertEqual(len(s), 1)

    def test_peek(self):
        s = Stack()
        s.push('x')
        self.assertEqual(s.peek(), 'x')
        self.assertEqual(len(s), 1)

    def test_peek_empty(self):
        with self.assertRaises(IndexError):
            Stack().peek()
