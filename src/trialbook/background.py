"""A call on a second thread, for work that runs without the interpreter's lock (numpy's array
loops and its multinomial draws): the task bootstrap draws while the rest of a scorecard is made,
and a run's rules are checked while it is tallied."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Generic, TypeVar, cast

__all__ = ["Background"]

_T = TypeVar("_T")


class Background(Generic[_T]):
    """One call on a thread of its own, its value (or its exception) taken by :meth:`result`."""

    def __init__(self, call: Callable[..., _T], *args: Any) -> None:
        self._value: _T | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(call, args), daemon=True)
        self._thread.start()

    def _run(self, call: Callable[..., _T], args: tuple[Any, ...]) -> None:
        try:
            self._value = call(*args)
        except BaseException as exc:  # handed to the caller by result()
            self._error = exc

    def result(self) -> _T:
        self._thread.join()
        if self._error is not None:
            raise self._error
        return cast(_T, self._value)

    @contextmanager
    def first(self) -> Iterator[None]:
        """Work done beside the call: should it raise, the call is waited for and its own error,
        if it has one, is raised instead (the error that came first when the call ran first)."""
        try:
            yield
        except BaseException:
            self.result()
            raise
