#!/usr/bin/env python3
"""Turns VCR cassettes (Ruby VCR, go-vcr, vcrpy and php-vcr YAML, ExVCR JSON) and nock recorder output (`*.nock.js`: the
`nock(HOST).METHOD(PATH, BODY).reply(STATUS, BODY, HEADERS)` calls `nock.recorder` prints) from
a git snapshot into the compact JSON-lines form the conformance runner replays: one line per
interaction, headers dropped, credentials stripped.

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
    if isinstance(doc, list):  # php-vcr: a list of {request: {url}, response: {status: {code}}}
        for item in doc:
            if not isinstance(item, dict) or "request" not in item or "response" not in item:
                continue
            req, resp = item["request"], item["response"]
            status = resp.get("status") or {}
            yield {
                "method": str(req["method"]).upper(),
                "url": req.get("url") or req.get("uri"),
                "req_type": header(req.get("headers"), "content-type"),
                "req_body": body_text(req.get("body")),
                "status": int(status.get("code") if isinstance(status, dict) else str(status).split()[0]),
                "resp_type": header(resp.get("headers"), "content-type"),
                "resp_body": body_text(resp.get("body")),
            }
    elif "http_interactions" in doc:  # Ruby VCR
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


class JsReader:
    """Reads the JavaScript literals nock recordings are written in: strings in either quote,
    numbers, true/false/null/undefined, arrays and objects (bare or quoted keys, trailing
    commas). Anything else raises ValueError."""

    def __init__(self, text, pos=0):
        self.text, self.pos = text, pos

    def skip_space(self):
        while self.pos < len(self.text):
            if self.text[self.pos].isspace():
                self.pos += 1
            elif self.text.startswith("//", self.pos):
                end = self.text.find("\n", self.pos)
                self.pos = len(self.text) if end < 0 else end
            elif self.text.startswith("/*", self.pos):
                end = self.text.find("*/", self.pos + 2)
                if end < 0:
                    raise ValueError("unclosed comment")
                self.pos = end + 2
            else:
                break

    def peek(self):
        self.skip_space()
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def expect(self, char):
        if self.peek() != char:
            raise ValueError(f"expected {char!r} at {self.pos}")
        self.pos += 1

    def string(self):
        quote = self.text[self.pos]
        self.pos += 1
        out = []
        escapes = {"n": "\n", "r": "\r", "t": "\t", "b": "\b", "f": "\f", "v": "\v", "0": "\0"}
        while self.pos < len(self.text):
            c = self.text[self.pos]
            self.pos += 1
            if c == quote:
                return "".join(out)
            if c == "\\":
                e = self.text[self.pos]
                self.pos += 1
                if e == "u":
                    out.append(chr(int(self.text[self.pos:self.pos + 4], 16)))
                    self.pos += 4
                elif e == "x":
                    out.append(chr(int(self.text[self.pos:self.pos + 2], 16)))
                    self.pos += 2
                elif e == "\n":
                    pass
                else:
                    out.append(escapes.get(e, e))
            else:
                out.append(c)
        raise ValueError("unclosed string")

    def value(self):
        c = self.peek()
        if c in "'\"":
            return self.string()
        if c == "{":
            self.pos += 1
            obj = {}
            while self.peek() != "}":
                if self.peek() in "'\"":
                    key = self.string()
                else:
                    m = re.compile(r"[A-Za-z_$][\w$]*|\d+").match(self.text, self.pos)
                    if not m:
                        raise ValueError(f"bad key at {self.pos}")
                    key, self.pos = m.group(0), m.end()
                self.expect(":")
                obj[key] = self.value()
                if self.peek() == ",":
                    self.pos += 1
            self.pos += 1
            return obj
        if c == "[":
            self.pos += 1
            items = []
            while self.peek() != "]":
                items.append(self.value())
                if self.peek() == ",":
                    self.pos += 1
            self.pos += 1
            return items
        m = re.compile(r"-?\d+(\.\d+)?([eE][+-]?\d+)?").match(self.text, self.pos)
        if m:
            self.pos = m.end()
            return float(m.group(0)) if (m.group(1) or m.group(2)) else int(m.group(0))
        for word, val in (("true", True), ("false", False), ("null", None), ("undefined", None)):
            if self.text.startswith(word, self.pos):
                self.pos += len(word)
                return val
        raise ValueError(f"unsupported value at {self.pos}: {self.text[self.pos:self.pos + 30]!r}")

    def args(self):
        """The arguments of a call whose `(` is next."""
        self.expect("(")
        out = []
        while self.peek() != ")":
            out.append(self.value())
            if self.peek() == ",":
                self.pos += 1
        self.pos += 1
        return out


def nock_interactions(text):
    """The interactions of a nock recording, in file order: `nock(HOST[, OPTIONS])`, then
    `.get|post|put|patch|delete|head(PATH[, BODY])`, an optional `.query(OBJECT)`, and
    `.reply(STATUS[, BODY[, HEADERS]])`. Other chained calls (`.times`, `.once`) are passed over."""
    for m in re.finditer(r"\bnock\s*\(", text):
        r = JsReader(text, m.end() - 1)
        try:
            host = r.args()[0]
            method = path = None
            req_body, query, reply = "", None, None
            while r.peek() == ".":
                r.pos += 1
                name = re.compile(r"[A-Za-z_$][\w$]*").match(text, r.pos)
                if not name:
                    break
                r.pos = name.end()
                args = r.args() if r.peek() == "(" else []
                call = name.group(0)
                if call in ("get", "post", "put", "patch", "delete", "head"):
                    method, path = call.upper(), args[0]
                    if len(args) > 1 and args[1] is not None:
                        req_body = args[1]
                elif call == "query" and args:
                    query = args[0]
                elif call == "reply":
                    reply = args
                    break
        except (ValueError, IndexError) as e:
            print(f"skip a nock call at {m.start()}: {e}", file=sys.stderr)
            continue
        if method is None or not isinstance(path, str) or not reply:
            continue
        if isinstance(query, dict):
            path += ("&" if "?" in path else "?") + urllib.parse.urlencode(
                [(k, v) for k, v in query.items()], doseq=True)
        if isinstance(req_body, str):
            req_type = "application/x-www-form-urlencoded" if req_body else ""
        else:
            req_body, req_type = json.dumps(req_body, ensure_ascii=False, separators=(",", ":")), "application/json"
        body = reply[1] if len(reply) > 1 else ""
        yield {
            "method": method,
            "url": host.rstrip("/") + path,
            "req_type": req_type,
            "req_body": req_body,
            "status": int(reply[0]),
            "resp_type": "",
            "resp_body": body if isinstance(body, str) else json.dumps(body, ensure_ascii=False),
        }


def exvcr_interactions(doc):
    """The interactions of an ExVCR (Elixir) JSON cassette: a list of {request: {method, url,
    body, headers}, response: {status_code, body}}."""
    for item in doc if isinstance(doc, list) else []:
        req, resp = item.get("request") or {}, item.get("response") or {}
        body = req.get("body") or ""
        kind = header(req.get("headers") or {}, "content-type") or ""
        if body and not kind:
            kind = "application/json" if body.lstrip().startswith(("{", "[")) else "application/x-www-form-urlencoded"
        yield {
            "method": str(req.get("method", "get")).upper(),
            "url": req.get("url", ""),
            "req_type": kind,
            "req_body": body,
            "status": int(resp.get("status_code", 0)),
            "resp_type": "",
            "resp_body": resp.get("body") or "",
        }


def emit(out, cassette, items, only_host):
    """Writes a cassette's interactions (those on `only_host`, if given) as JSON lines; returns
    how many."""
    count = 0
    for it in items:
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
            # The default port is no part of the host (nock writes `api.mailgun.net:443`).
            "host": url.netloc[:-4] if url.netloc.endswith(":443") and url.scheme == "https" else url.netloc,
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
    return count


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
    files = sorted(
        f for f in files if f.endswith((".yml", ".yaml", ".nock.js", ".json")) and not (skip and skip.search(f))
    )
    out_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "recordings", service)
    os.makedirs(out_dir, exist_ok=True)
    count = 0
    with open(os.path.join(out_dir, source + ".jsonl"), "w", encoding="utf-8") as out:
        for path in files:
            text = subprocess.run(
                ["git", "--git-dir", git_dir, "show", f"{commit}:{path}"], check=True, capture_output=True
            ).stdout.decode("utf-8", "replace")
            cassette = path[len(prefix):].lstrip("/")
            if path.endswith(".nock.js"):
                count += emit(out, cassette, nock_interactions(text), only_host)
                continue
            if path.endswith(".json"):
                count += emit(out, cassette, exvcr_interactions(json.loads(text)), only_host)
                continue
            try:
                text = re.sub(r"<%=\s*domain\s*%>", "recorded.mailgun.example", text)
                text = re.sub(r"<%=.*?%>", "REDACTED", text)
                doc = yaml.load(text, Loader=Loose)
            except yaml.YAMLError as e:
                print(f"skip {path}: {e}", file=sys.stderr)
                continue
            if not isinstance(doc, (dict, list)):
                continue
            count += emit(out, cassette, interactions(doc), only_host)
    print(f"{service}/{source}: {count} interactions from {len(files)} files")


if __name__ == "__main__":
    main()
