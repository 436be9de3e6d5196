"""tokenbell's test helpers from another language: the same operations as startTokenbell's helpers, over HTTP.

Needs a server started with --test-helpers and, in the environment, TOKENBELL_URL (its base URL) and
TOKENBELL_TEST_HELPERS_TOKEN (the administrator's token: the server's --test-helpers-token, or the one it printed at start).
No seed: each test makes what it needs. Standard library only:

    export TOKENBELL_TEST_HELPERS_TOKEN=tbpat-my-suite-token-0123456789
    npx tokenbell --memory --test-helpers &
    TOKENBELL_URL=http://127.0.0.1:3000 python3 -m unittest -v test_tokenbell
"""

import json
import os
import unittest
import urllib.error
import urllib.parse
import urllib.request

BASE_URL = os.environ["TOKENBELL_URL"].rstrip("/")
ADMIN_TOKEN = os.environ["TOKENBELL_TEST_HELPERS_TOKEN"]


def call(method, path, body=None, headers=None):
    """(status, parsed JSON or None); an error status is an answer to look at here, not an exception."""
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
    """A test-helper operation as the administrator; anything but success stops the test with the server's answer."""
    status, answer = call(method, "/api/v4/test_helpers" + path, body, {"PRIVATE-TOKEN": ADMIN_TOKEN})
    if status >= 300:
        raise AssertionError(f"{method} {path} answered {status}: {answer}")
    return answer


class TokenbellHelpersTest(unittest.TestCase):
    def setUp(self):
        # Back to the state at start, so no test sees another's users, applications, tokens or faults.
        helper("POST", "/reset")

    def test_personal_access_token_of_a_new_user(self):
        helper("POST", "/users", {"username": "bob", "email": "bob@example.com", "name": "Bob", "password": "bob-password-1"})
        pat = helper("POST", "/personal_access_tokens", {"username": "bob", "name": "python", "scopes": ["read_user"]})
        status, user = call("GET", "/api/v4/user", headers={"PRIVATE-TOKEN": pat["token"]})
        self.assertEqual(status, 200)
        self.assertEqual(user["username"], "bob")

    def test_queued_fault_answers_once(self):
        helper("POST", "/faults", {"match": {"method": "GET", "path": "/api/v4/user"}, "answer": {"status": 500}})
        status, _ = call("GET", "/api/v4/user", headers={"PRIVATE-TOKEN": ADMIN_TOKEN})
        self.assertEqual(status, 500)
        status, user = call("GET", "/api/v4/user", headers={"PRIVATE-TOKEN": ADMIN_TOKEN})
        self.assertEqual(status, 200)
        self.assertTrue(user["is_admin"])

    def test_journal_records_the_application_of_an_oauth_token(self):
        admin = call("GET", "/api/v4/user", headers={"PRIVATE-TOKEN": ADMIN_TOKEN})[1]["username"]
        app = helper("POST", "/applications", {"name": "Python Example", "owner": admin, "redirect_uris": ["http://127.0.0.1:8080/callback"], "scopes": ["read_user"]})
        CLIENT_ID = app["client_id"]
        tokens = helper("POST", "/oauth_tokens", {"username": admin, "client_id": CLIENT_ID})
        status, _ = call("GET", "/api/v4/user", headers={"Authorization": "Bearer " + tokens["access_token"]})
        self.assertEqual(status, 200)
        query = urllib.parse.urlencode({"path": "/api/v4/user", "client_id": CLIENT_ID})
        recorded = helper("GET", "/requests?" + query)
        self.assertEqual(len(recorded), 1)
        self.assertEqual(
            {key: recorded[0][key] for key in ("method", "status", "client_id", "username")},
            {"method": "GET", "status": 200, "client_id": CLIENT_ID, "username": admin},
        )


if __name__ == "__main__":
    unittest.main()
