"""Gzip for responses, cheap enough to run on every page under load.

Django's GZipMiddleware compresses at level 6: about 22 ms of CPU for a one-megabyte history
page or plan JSON on these cores, more than rendering the page from its caches. Level 1 takes
about a third of that for a body a tenth larger (`compress`), with Django's BREACH padding (a
random file name in the gzip header, so pages carrying a CSRF token are safe to compress).
A body that never changes can be compressed once and kept (`gzip_response`: a finished plan's
JSON at level 9).
"""

from __future__ import annotations

import gzip
import secrets
import string

from django.http import HttpRequest, HttpResponse, HttpResponseBase
from django.middleware.gzip import GZipMiddleware as DjangoGZipMiddleware
from django.middleware.gzip import re_accepts_gzip
from django.utils.cache import patch_vary_headers

PAGE_LEVEL = 1
STORED_LEVEL = 9
MAX_RANDOM_BYTES = 100
_NAME_CHARACTERS = string.ascii_letters + string.digits


def compress(content: bytes, *, level: int = PAGE_LEVEL,
             max_random_bytes: int = MAX_RANDOM_BYTES) -> bytes:
    """gzip of `content` whose header carries a random file name of 1..max_random_bytes
    characters (Django's "Heal the BREACH" padding); 0 gives a plain, reproducible stream."""
    data = gzip.compress(content, compresslevel=level, mtime=0)
    if not max_random_bytes:
        return data
    header = bytearray(data[:10])
    header[3] = gzip.FNAME
    length = 1 + secrets.randbelow(max_random_bytes)
    name = "".join(secrets.choice(_NAME_CHARACTERS) for _ in range(length)).encode()
    return bytes(header) + name + b"\x00" + data[10:]


def accepts_gzip(request: HttpRequest) -> bool:
    return bool(re_accepts_gzip.search(request.META.get("HTTP_ACCEPT_ENCODING", "")))


def gzip_response(request: HttpRequest, content: bytes, compressed: bytes,
                  content_type: str) -> HttpResponse:
    """A response of a body compressed ahead of time: gzip for clients that accept it, the
    plain body for the others (the middleware leaves an encoded response alone)."""
    if accepts_gzip(request) and len(compressed) < len(content):
        response = HttpResponse(compressed, content_type=content_type)
        response.headers["Content-Encoding"] = "gzip"
    else:
        response = HttpResponse(content, content_type=content_type)
    patch_vary_headers(response, ("Accept-Encoding",))
    return response


class GZipMiddleware(DjangoGZipMiddleware):
    """Django's GZipMiddleware at level 1 for whole bodies (streams as Django does)."""

    max_random_bytes = MAX_RANDOM_BYTES

    def process_response(self, request: HttpRequest,
                         response: HttpResponseBase) -> HttpResponseBase:
        if (response.streaming or not isinstance(response, HttpResponse)
                or len(response.content) < 200 or response.has_header("Content-Encoding")):
            return super().process_response(request, response)
        patch_vary_headers(response, ("Accept-Encoding",))
        if not accepts_gzip(request):
            return response
        compressed = compress(response.content, max_random_bytes=self.max_random_bytes)
        if len(compressed) >= len(response.content):
            return response
        response.content = compressed
        response.headers["Content-Length"] = str(len(compressed))
        etag = response.get("ETag")
        if etag and etag.startswith('"'):
            response.headers["ETag"] = "W/" + etag  # RFC 9110 8.8.1, as Django does
        response.headers["Content-Encoding"] = "gzip"
        return response
