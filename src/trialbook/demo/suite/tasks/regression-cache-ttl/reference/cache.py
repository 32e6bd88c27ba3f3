import time


class Cache:
    def __init__(self, clock=time.monotonic):
        self._clock = clock
        self._data = {}

    def set(self, key, value, ttl=None):
        expires = None if ttl is None else self._clock() + ttl
        self._data[key] = (value, expires)

    def get(self, key, default=None):
        if key not in self._data:
            return default
        value, expires = self._data[key]
        if expires is not None and self._clock() >= expires:
            return default
        return value
