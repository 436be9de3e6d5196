"""Authlib's OpenID Connect client, composed as its Flask and Django clients are (OAuth2Mixin, OpenIDMixin over a
requests session), configured for gitlab.com with only the base URL changed. Prints the authorization URL as one JSON
line, reads the callback URL from stdin, then prints what it saw as one JSON object.

Usage: python3 authlib_session.py BASE_URL CLIENT_ID CLIENT_SECRET REDIRECT_URI
"""
import json
import sys
from urllib.parse import parse_qs, urlparse

import authlib
from authlib.integrations.base_client.sync_app import BaseApp, OAuth2Mixin
from authlib.integrations.base_client.sync_openid import OpenIDMixin
from authlib.integrations.requests_client import OAuth2Session

base_url, client_id, client_secret, redirect_uri = sys.argv[1:5]


class Framework:
    """What a web framework gives an authlib app; tokens here live in this one run."""

    @staticmethod
    def update_token(*args, **kwargs):
        pass


class GitLab(OAuth2Mixin, OpenIDMixin, BaseApp):
    client_cls = OAuth2Session


gitlab = GitLab(
    Framework(),
    name="gitlab",
    client_id=client_id,
    client_secret=client_secret,
    server_metadata_url=base_url + "/.well-known/openid-configuration",
    client_kwargs={"scope": "openid profile email", "code_challenge_method": "S256"},
)

started = gitlab.create_authorization_url(redirect_uri)
print(json.dumps({"url": started["url"]}), flush=True)
callback = urlparse(sys.stdin.readline().strip())
query = parse_qs(callback.query)
if query["state"][0] != started["state"]:
    raise SystemExit("state mismatch")

token = gitlab.fetch_access_token(redirect_uri, code=query["code"][0], code_verifier=started["code_verifier"])
claims = gitlab.parse_id_token(token, nonce=started["nonce"])
userinfo = gitlab.userinfo(token=token)
print(json.dumps({
    "version": authlib.__version__,
    "nonce": started["nonce"],
    "token_scope": token.get("scope"),
    "claims": dict(claims),
    "userinfo": dict(userinfo),
}))
