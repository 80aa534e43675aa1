"""Room: providers (on the standard library). Owns the errors of the HTTP transport (models/wire.py):
what the providers' retries (models/retry.py), their messages and the web tools tell apart. Every
one is an HTTPError; the cause (an OSError, an ssl.SSLError) is chained.
"""

from __future__ import annotations


class HTTPError(Exception):
    """Any failure of this transport."""


class UnsupportedProtocol(HTTPError):
    """A URL that is not http:// or https://, or a proxy of an unknown kind."""


class ProxyError(HTTPError):
    """The proxy refused the tunnel (its status in the message)."""


class NetworkError(HTTPError):
    """The network failed."""


class ConnectError(NetworkError):
    """No connection could be made (refused, unreachable, a name that does not resolve, TLS)."""


class ReadError(NetworkError):
    """The connection broke while the response was read."""


class WriteError(NetworkError):
    """The connection broke while the request was sent."""


class TimeoutException(HTTPError):
    """A timeout."""


class DeadlineExceeded(TimeoutException):
    """The body was still arriving at the response's `deadline`."""


class ConnectTimeout(TimeoutException):
    """Connecting took longer than the connect timeout."""


class ReadTimeout(TimeoutException):
    """The server was silent longer than the read timeout."""


class WriteTimeout(TimeoutException):
    """The request could not be sent within the write timeout."""


class ProtocolError(HTTPError):
    """HTTP/1.1 was broken."""


class RemoteProtocolError(ProtocolError):
    """The server broke HTTP/1.1, or closed the connection before its answer was whole."""


class LocalProtocolError(ProtocolError):
    """A request that HTTP/1.1 cannot carry (a bad header, say)."""


class ResponseTooLarge(RemoteProtocolError):
    """A body, or one line of it, past the reader's limit: a hostile or broken server's."""


__all__ = ["ConnectError", "ConnectTimeout", "DeadlineExceeded", "HTTPError", "LocalProtocolError", "NetworkError",
           "ProtocolError", "ProxyError", "ReadError", "ReadTimeout", "RemoteProtocolError", "ResponseTooLarge",
           "TimeoutException", "UnsupportedProtocol", "WriteError", "WriteTimeout"]
