import time


class Cache:
    def __init__(self, clock=time.monotonic):
        self._clock = clock
        self._data = {}

    def set(self, key, value, ttl=0):
        self._data[key] = (value, self._clock() + ttl)

    def get(self, key, default=None):
        if key not in self._data:
            return default
        value, expires = self._data[key]
        return default if self._clock() >= expires else value
