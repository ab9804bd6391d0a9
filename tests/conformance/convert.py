#!/usr/bin/env python3
"""Turns VCR cassettes (Ruby VCR and go-vcr YAML) from a git snapshot into the compact JSON-lines
form the conformance runner replays: one line per interaction, headers dropped, credentials
stripped.

    convert.py SERVICE SOURCE_NAME GIT_DIR COMMIT PATH_PREFIX [--skip REGEX] [--only-host HOST]

Writes tests/conformance/recordings/SERVICE/SOURCE_NAME.jsonl (cassettes in path order,
interactions in recorded order).
"""
import base64
import json
import os
import re
import subprocess
import sys
import urllib.parse

import yaml


class Loose(yaml.SafeLoader):
    """Accepts Ruby-specific tags (`!ruby/object`, `!binary`, ...) as plain data."""


def _any_tag(loader, suffix, node):
    if isinstance(node, yaml.ScalarNode):
        value = loader.construct_scalar(node)
        if suffix == "binary" or suffix.endswith(":binary"):
            try:
                return base64.b64decode(value).decode("utf-8", "replace")
            except Exception:  # noqa: BLE001
                return value
        return value
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node, deep=True)
    return loader.construct_mapping(node, deep=True)


Loose.add_multi_constructor("!", _any_tag)
Loose.add_multi_constructor("tag:yaml.org,2002:binary", _any_tag)
Loose.add_multi_constructor("tag:yaml.org,2002:python/", _any_tag)

SECRETS = [
    # EasyPost API keys, Mailgun keys, bearer tokens, basic credentials in URLs
    (re.compile(r"EZ[AT]K[0-9a-zA-Z]{20,}"), "EZTK_REDACTED"),
    (re.compile(r"key-[0-9a-f]{32}"), "key-REDACTED"),
    (re.compile(r"pubkey-[0-9a-f]{32}"), "pubkey-REDACTED"),
    (re.compile(r"\b[0-9a-f]{32}-[0-9a-f]{8}-[0-9a-f]{8}\b"), "REDACTED"),  # Mailgun's newer keys
    (re.compile(r"(?i)(api_key|apikey|access_token|password|license_key)=([^&\s\"]+)"), r"\1=REDACTED"),
    (re.compile(r"https?://[^/\s:@\"]+:[^/\s@\"]+@"), "https://"),
]


def scrub(text):
    if text is None:
        return text
    for pattern, repl in SECRETS:
        text = pattern.sub(repl, text)
    return text


def body_text(body):
    if body is None:
        return ""
    if isinstance(body, str):
        return body
    if isinstance(body, dict):
        if body.get("base64_string") is not None:
            try:
                return base64.b64decode(body["base64_string"]).decode("utf-8", "replace")
            except Exception:  # noqa: BLE001
                return ""
        return body.get("string") or ""
    return str(body)


def header(headers, name):
    for key, value in (headers or {}).items():
        if str(key).lower() == name:
            if isinstance(value, list):
                return str(value[0]) if value else ""
            return str(value)
    return ""


def interactions(doc):
    if "http_interactions" in doc:  # Ruby VCR
        for item in doc["http_interactions"] or []:
            req, resp = item["request"], item["response"]
            status = resp.get("status") or {}
            yield {
                "method": str(req["method"]).upper(),
                "url": req["uri"],
                "req_type": header(req.get("headers"), "content-type"),
                "req_body": body_text(req.get("body")),
                "status": int(status.get("code") if isinstance(status, dict) else str(status).split()[0]),
                "resp_type": header(resp.get("headers"), "content-type"),
                "resp_body": body_text(resp.get("body")),
            }
    elif "interactions" in doc:  # go-vcr, and Python's vcrpy (`uri`, `status: {code}`)
        for item in doc["interactions"] or []:
            req, resp = item["request"], item["response"]
            status = resp.get("status", "0")
            code = resp.get("code") or (status.get("code") if isinstance(status, dict) else int(str(status).split()[0]))
            yield {
                "method": str(req["method"]).upper(),
                "url": req.get("url") or req.get("uri"),
                "req_type": header(req.get("headers"), "content-type"),
                "req_body": body_text(req.get("body")),
                "status": int(code),
                "resp_type": header(resp.get("headers"), "content-type"),
                "resp_body": body_text(resp.get("body")),
            }


def main():
    service, source, git_dir, commit, prefix = sys.argv[1:6]
    rest = sys.argv[6:]
    skip = None
    only_host = None
    while rest:
        flag, value, rest = rest[0], rest[1], rest[2:]
        if flag == "--skip":
            skip = re.compile(value)
        elif flag == "--only-host":
            only_host = value
    files = subprocess.run(
        ["git", "--git-dir", git_dir, "ls-tree", "-r", "--name-only", commit, prefix],
        check=True, capture_output=True, text=True,
    ).stdout.split("\n")
    files = sorted(f for f in files if f.endswith((".yml", ".yaml")) and not (skip and skip.search(f)))
    out_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "recordings", service)
    os.makedirs(out_dir, exist_ok=True)
    count = 0
    with open(os.path.join(out_dir, source + ".jsonl"), "w", encoding="utf-8") as out:
        for path in files:
            text = subprocess.run(
                ["git", "--git-dir", git_dir, "show", f"{commit}:{path}"], check=True, capture_output=True
            ).stdout.decode("utf-8", "replace")
            try:
                text = re.sub(r"<%=\s*domain\s*%>", "recorded.mailgun.example", text)
                text = re.sub(r"<%=.*?%>", "REDACTED", text)
                doc = yaml.load(text, Loader=Loose)
            except yaml.YAMLError as e:
                print(f"skip {path}: {e}", file=sys.stderr)
                continue
            if not isinstance(doc, dict):
                continue
            cassette = path[len(prefix):].lstrip("/")
            for it in interactions(doc):
                url = urllib.parse.urlsplit(scrub(it["url"]))
                if only_host and only_host not in url.netloc:
                    continue
                target = url.path + (("?" + url.query) if url.query else "")
                resp = scrub(it["resp_body"])
                try:
                    resp_value = json.loads(resp) if resp.strip() else None
                    resp_json = True
                except ValueError:
                    resp_value, resp_json = resp, False
                line = {
                    "cassette": cassette,
                    "method": it["method"],
                    "host": url.netloc,
                    "path": target,
                    # A multipart type keeps its boundary; others lose their parameters.
                    "req_type": it["req_type"] if it["req_type"].startswith("multipart/")
                    else it["req_type"].split(";")[0].strip(),
                    "req_body": scrub(it["req_body"]),
                    "status": it["status"],
                    "resp_json": resp_json,
                    "resp_body": resp_value,
                }
                out.write(json.dumps(line, ensure_ascii=False, sort_keys=True) + "\n")
                count += 1
    print(f"{service}/{source}: {count} interactions from {len(files)} files")


if __name__ == "__main__":
    main()
