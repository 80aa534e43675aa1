"""A browser for tests: `BROWSER="python headless_browser.py %s"`. It opens the authorization URL
as a browser would when the user has already consented: it follows the authorization server's
redirect to the client's loopback callback (urllib follows redirects), and prints the status."""

from __future__ import annotations

import sys
import urllib.error
import urllib.request

try:
    with urllib.request.urlopen(sys.argv[1], timeout=30) as r:  # noqa: S310 - a test's loopback URL
        print(r.status, file=sys.stderr)
except urllib.error.HTTPError as e:
    print(e.code, file=sys.stderr)
    sys.exit(1)
