"""Pagination as pure generators: given the last page, the next request or stop.

No IO here. A pager yields :class:`PageRequest` values; the caller sends
back how many records the page held (``pager.send(n)``) and gets the next
request, until :class:`StopIteration`.

The rule is "a short or empty page stops". One interface detail makes it
unsafe on its own: the maximum ``limit`` is not documented, so a service
that silently caps ``limit`` would return *every* page short. So when the
very first page is short but not empty and the client has not yet seen the
service honour its ``limit`` (a full page), the pager asks once more for the
records that would follow under the smaller page size. An empty answer
confirms the page was really the last; records mean the service caps
``limit`` at that size, and paging carries on with it.

Examples
--------
>>> pager = pages(100)
>>> next(pager)
PageRequest(page=1, limit=100, probe=False)
>>> pager.send(100)
PageRequest(page=2, limit=100, probe=False)
>>> pager.send(40)
Traceback (most recent call last):
StopIteration
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass

__all__ = ["PageRequest", "pages"]


@dataclass(frozen=True)
class PageRequest:
    """One page to ask for."""

    page: int
    """1-based page number, as the interface counts."""
    limit: int
    """Records per page (the interface's ``limit``)."""
    probe: bool = False
    """True for the single request that checks whether the service caps ``limit``."""


def pages(
    limit: int, *, verified: bool = False, complete_below: int = 0
) -> Generator[PageRequest, int, None]:
    """Yield page requests until a short or empty page.

    Parameters
    ----------
    limit : int
        Records per page to ask for.
    verified : bool
        The service is known to honour ``limit`` (a full page was seen
        before), so a short first page needs no check.
    complete_below : int
        A short first page with fewer records than this needs no check
        either: the service was seen answering a complete page of this many,
        so any cap it has is at least that large.

    Yields
    ------
    PageRequest
        Send back the number of records the page held.
    """
    if limit < 1:
        raise ValueError(f"limit must be a positive integer, got {limit}")
    page = 1
    while True:
        count = yield PageRequest(page, limit)
        if count is None:
            raise TypeError("send the number of records the page held")
        if count >= limit:
            verified = True
            page += 1
            continue
        if count == 0 or verified or page != 1 or count < complete_below:
            return
        # A short first page: is it the end, or does the service cap limit at `count`?
        limit = count
        page = 2
        count = yield PageRequest(page, limit, probe=True)
        if count is None:
            raise TypeError("send the number of records the page held")
        if count < limit:
            return
        verified = True
        page += 1
