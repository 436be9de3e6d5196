"""python-gitlab, as its users write it, against a running tokenbell; prints what it saw as one JSON object.

Usage: python3 python_gitlab_session.py BASE_URL PRIVATE_TOKEN OAUTH_TOKEN
"""
import json
import sys

import gitlab

base_url, private_token, oauth_token = sys.argv[1:4]
seen = {"version": gitlab.__version__}

for kind, gl in (
    ("private_token", gitlab.Gitlab(base_url, private_token=private_token)),
    ("oauth_token", gitlab.Gitlab(base_url, oauth_token=oauth_token)),
):
    gl.auth()
    result = {"user": gl.user.username, "server_version": list(gl.version())}
    # One a page: python-gitlab follows the Link header's next page to the end.
    result["owned_groups"] = [g.full_path for g in gl.groups.list(min_access_level=50, per_page=1, get_all=True)]
    result["member_projects"] = sorted(p.path_with_namespace for p in gl.projects.list(membership=True, per_page=2, get_all=True))

    settings = gl.notificationsettings.get()
    settings.level = "watch"
    settings.save()
    result["global"] = gl.notificationsettings.get().level

    group = gl.groups.get("acme")
    group_settings = group.notificationsettings.get()
    group_settings.level = "custom"
    group_settings.new_issue = True
    group_settings.save()
    again = group.notificationsettings.get()
    result["group"] = {"full_path": group.full_path, "level": again.level, "new_issue": again.events["new_issue"]}

    project = gl.projects.get("acme/widgets")
    project_settings = project.notificationsettings.get()
    project_settings.level = "mention"
    project_settings.save()
    result["project"] = {"id": project.id, "path_with_namespace": project.path_with_namespace, "level": project.notificationsettings.get().level}

    # Without fetching the project first: the path is the id.
    lazy = gl.projects.get("acme/widgets", lazy=True)
    result["lazy_project"] = lazy.notificationsettings.get().level
    result["lazy_group"] = gl.groups.get("acme", lazy=True).notificationsettings.get().level

    try:
        gl.projects.get("acme/no-such-project")
        result["missing_project"] = "found"
    except gitlab.exceptions.GitlabGetError as error:
        result["missing_project"] = [type(error).__name__, error.response_code, error.error_message]
    seen[kind] = result

try:
    gitlab.Gitlab(base_url, private_token="tbpat-not-a-token").auth()
    seen["bad_token"] = "accepted"
except gitlab.exceptions.GitlabAuthenticationError as error:
    seen["bad_token"] = [type(error).__name__, error.response_code, error.error_message]

print(json.dumps(seen))
