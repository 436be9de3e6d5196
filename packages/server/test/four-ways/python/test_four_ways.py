"""The fourth way: Python's standard library over HTTP, against `tokenbell --memory --test-helpers --seed ...`.

TOKENBELL_URL is the instance and TOKENBELL_TEST_HELPERS_TOKEN an administrator's personal access token from the seed.
"""

import json
import os
import unittest
import urllib.error
import urllib.request

BASE_URL = os.environ["TOKENBELL_URL"].rstrip("/")
ADMIN_TOKEN = os.environ["TOKENBELL_TEST_HELPERS_TOKEN"]


def call(method, path, body=None, headers=None):
    """(status, parsed JSON or None)."""
    request = urllib.request.Request(
        BASE_URL + path,
        method=method,
        data=None if body is None else json.dumps(body).encode(),
        headers={**({"Content-Type": "application/json"} if body is not None else {}), **(headers or {})},
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            status, raw = response.status, response.read()
    except urllib.error.HTTPError as error:
        status, raw = error.code, error.read()
    return status, json.loads(raw) if raw else None


def helper(method, path, body=None):
    status, answer = call(method, "/api/v4/test_helpers" + path, body, {"PRIVATE-TOKEN": ADMIN_TOKEN})
    if status >= 300:
        raise AssertionError(f"{method} {path} answered {status}: {answer}")
    return answer


class FourWaysTest(unittest.TestCase):
    def setUp(self):
        helper("POST", "/reset")

    def test_token_answers_its_user_until_it_expires(self):
        minted = helper("POST", "/oauth_tokens", {"username": "alice", "client_id": "my-app"})
        me = lambda: call("GET", "/api/v4/user", headers={"Authorization": "Bearer " + minted["access_token"]})
        status, user = me()
        self.assertEqual(status, 200)
        self.assertEqual(user["username"], "alice")
        helper("POST", "/clock", {"seconds": minted["expires_in"] + 1})
        self.assertEqual(me()[0], 401)


if __name__ == "__main__":
    unittest.main()
