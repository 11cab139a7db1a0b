"""StreamPark's database address: the URL forms :mod:`planlineage.watch.url` accepts, named in
messages by StreamPark's flag and environment variable."""

from __future__ import annotations

from planlineage.streampark import FLAG, PLATFORM, URL_ENV
from planlineage.watch.url import Target
from planlineage.watch.url import parse as parse_address


def parse(url: str, user: str | None = None, password: str | None = None) -> Target:
    """A :class:`Target` of StreamPark's database; ``user``/``password`` override the URL's."""
    return parse_address(url, user, password, platform=PLATFORM, flag=FLAG, env=URL_ENV)
