"""Room: providers (on the standard library; truststore on macOS and Windows). Owns the transport's
TLS trust (models/wire.py): the system's store as httpx2 and the official SDKs build it, loaded once
per process.
"""

from __future__ import annotations

import functools
import os
import ssl


def system_tls_context() -> ssl.SSLContext:
    """The system's trust store (SSL_CERT_FILE / SSL_CERT_DIR first), and the CAs of Claude Code's
    NODE_EXTRA_CA_CERTS besides (a corporate proxy's, set for Claude Code), loaded once per process."""
    return _system_context(os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"),
                           os.environ.get("NODE_EXTRA_CA_CERTS"))


# Where OpenSSL's compiled-in paths are unusable, where Linux distributions keep their bundle
# (truststore's own fallbacks).
_CA_FILES = ("/etc/ssl/cert.pem", "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem", "/etc/pki/tls/cert.pem",
             "/etc/ssl/certs/ca-certificates.crt", "/etc/ssl/ca-bundle.pem")


@functools.lru_cache(maxsize=4)
def _system_context(cert_file: str | None, cert_dir: str | None, extra: str | None = None) -> ssl.SSLContext:
    ctx = _store(cert_file, cert_dir)
    if extra:  # added to the store, as Node adds them; a file that is no CA bundle is Node's warning, and ours
        try:
            ctx.load_verify_locations(cafile=extra)
        except (OSError, ssl.SSLError) as e:
            import logging

            logging.getLogger("loopwright.models").warning("NODE_EXTRA_CA_CERTS=%s is not read: %s", extra, e)
    return ctx


def _store(cert_file: str | None, cert_dir: str | None) -> ssl.SSLContext:
    """The context httpx2 (and so the official SDKs) builds: SSL_CERT_FILE, else SSL_CERT_DIR,
    else the OS's store (truststore on macOS and Windows; OpenSSL's paths, or a known bundle,
    on Linux). Loading a store is ~100 ms: done once per process."""
    import sys

    if cert_file:
        return ssl.create_default_context(cafile=cert_file)
    if cert_dir:
        return ssl.create_default_context(capath=cert_dir)
    if sys.platform in ("win32", "darwin"):
        import truststore

        return truststore.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    paths = ssl.get_default_verify_paths()  # the compiled-in ones (set_default_verify_paths reads SSL_CERT_*)
    cafile = paths.openssl_cafile if os.path.isfile(paths.openssl_cafile) else None
    capath = paths.openssl_capath if os.path.isdir(paths.openssl_capath) else None
    if capath and not cafile and not any(len(f) == 10 and f[8] == "." for f in os.listdir(capath)):
        capath = None  # a directory without hashed names is not a CA directory
    if not cafile and not capath:
        cafile = next(filter(os.path.isfile, _CA_FILES), None)
    if cafile or capath:
        ctx.load_verify_locations(cafile, capath)
    return ctx
