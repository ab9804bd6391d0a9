#!/usr/bin/env python3
"""Smoke test: the official Mailgun Python SDK (PyPI `mailgun` 1.x) against `opsdeck sandbox`.

Usage: mailgun_python.py [US_BASE_URL] [EU_BASE_URL]
       (defaults $OPSDECK_MAILGUN_URL / $OPSDECK_MAILGUN_EU_URL, else http://127.0.0.1:7706 / :7707)

Sends a message with two attachments from mg.example.com and waits (bounded) for its `delivered`
event; creates, lists, reads and deletes a bounce; creates a mailing list, adds members one at a
time and in bulk, pages through them and deletes them; creates, lists, reads and deletes a route;
then checks the EU region: mg.example.eu answers and sends there, the US domain is unknown there
(401 `Forbidden` for its events) and vice versa; and that a webhook URL off this machine and a
route forwarding to a pattern are accepted, as Mailgun accepts them. Names carry a per-run id, so reruns against one sandbox do not collide. Prints one
line per check and exits 1 at the first failure. Every wait is bounded.

The SDK only allows plain http for 127.0.0.1 and localhost, which is what the sandbox prints.
"""

import json
import os
import sys
import time
import uuid

try:
    from mailgun.client import Client
except ImportError as e:
    print(f"FAIL python: cannot import the mailgun SDK: {e}", file=sys.stderr)
    sys.exit(1)

us_url = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("OPSDECK_MAILGUN_URL", "http://127.0.0.1:7706")
eu_url = sys.argv[2] if len(sys.argv) > 2 else os.environ.get("OPSDECK_MAILGUN_EU_URL", "http://127.0.0.1:7707")
key = os.environ.get("MAILGUN_SANDBOX_KEY", "sandbox-mailgun-key")
DOMAIN = "mg.example.com"
EU_DOMAIN = "mg.example.eu"
EVENT_WAIT_SECONDS = float(os.environ.get("MAILGUN_EVENT_WAIT", "30"))
run = uuid.uuid4().hex[:10]

us = Client(auth=("api", key), api_url=us_url.rstrip("/"))
eu = Client(auth=("api", key), api_url=eu_url.rstrip("/"))


def check(name, condition, detail=""):
    if not condition:
        print(f"FAIL python: {name} {detail}", file=sys.stderr)
        sys.exit(1)
    print(f"ok python: {name}")


def body(name, response, status=200):
    """The JSON of a response that must have `status`; fails the check otherwise."""
    text = getattr(response, "text", "")
    check(f"{name} answers {status}", response.status_code == status, f"got {response.status_code}: {text[:300]}")
    try:
        return response.json()
    except ValueError:
        check(f"{name} answers JSON", False, text[:300])
    return None


# --- sending with two attachments, then its events -------------------------------------------

recipient = f"py-{run}@example.com"
sent = body(
    "send",
    us.messages.create(
        domain=DOMAIN,
        data={
            "from": f"Smoke <smoke@{DOMAIN}>",
            "to": recipient,
            "subject": f"opsdeck smoke {run}",
            "text": "Two attachments follow.",
            "o:tag": "sdk-smoke",
            "v:run": json.dumps({"id": run}),
        },
        files=[
            ("attachment", ("invoice.txt", b"invoice 42\n")),
            ("attachment", ("terms.csv", b"clause,text\n1,be nice\n")),
        ],
    ),
)
message_id = str(sent.get("id", ""))
check("send queued", sent.get("message") == "Queued. Thank you." and message_id.startswith("<"), repr(sent))
bare_id = message_id.strip("<>")


def events_of(kind):
    answer = body(f"events {kind}", us.events.get(domain=DOMAIN, filters={"event": kind, "recipient": recipient, "limit": 50}))
    return [e for e in answer.get("items", []) if e.get("message", {}).get("headers", {}).get("message-id") == bare_id]


accepted = events_of("accepted")
check("accepted event", len(accepted) == 1, repr(accepted))
names = sorted(a.get("filename") for a in accepted[0].get("message", {}).get("attachments", []))
check("accepted event lists both attachments", names == ["invoice.txt", "terms.csv"], repr(names))
deadline = time.monotonic() + EVENT_WAIT_SECONDS
delivered = []
while time.monotonic() < deadline:
    delivered = events_of("delivered")
    if delivered:
        break
    time.sleep(0.5)
check(f"delivered event within {EVENT_WAIT_SECONDS:g}s", len(delivered) == 1, repr(delivered))
check("delivered event names the recipient", delivered[0].get("recipient") == recipient, repr(delivered[0]))

# --- bounces ---------------------------------------------------------------------------------

bounced = f"bounce-{run}@example.net"
created = body("bounce create", us.bounces.create(domain=DOMAIN, data={"address": bounced, "code": 550, "error": "smoke"}))
check("bounce created", created.get("address") == bounced, repr(created))
listed = body("bounce list", us.bounces.get(domain=DOMAIN, filters={"limit": 1000}))
check("bounce listed", bounced in [b.get("address") for b in listed.get("items", [])], repr(listed)[:300])
one = body("bounce get", us.bounces.get(domain=DOMAIN, bounce_address=bounced))
check("bounce read back", str(one.get("code")) == "550" and one.get("error") == "smoke", repr(one))
body("bounce delete", us.bounces.delete(domain=DOMAIN, bounce_address=bounced))
body("deleted bounce is gone", us.bounces.get(domain=DOMAIN, bounce_address=bounced), status=404)

# --- mailing lists and members ---------------------------------------------------------------

seeded = body("seeded list", us.lists.get(domain=DOMAIN, address=f"developers@{DOMAIN}"))
check("seeded list has its members", seeded.get("list", {}).get("members_count") == 3, repr(seeded))
list_address = f"py-{run}@{DOMAIN}"
made = body("list create", us.lists.create(domain=DOMAIN, data={"address": list_address, "name": "Smoke", "access_level": "members"}))
check("list created", made.get("list", {}).get("address") == list_address, repr(made))
refused = body("bad access level", us.lists.create(domain=DOMAIN, data={"address": f"bad-{run}@{DOMAIN}", "access_level": "nobody"}), status=400)
check("bad access level explained", "access level" in refused.get("message", ""), repr(refused))
pages = body("list pages", us.lists_pages.get(domain=DOMAIN, filters={"limit": 100}))
check("list in pages", list_address in [item.get("address") for item in pages.get("items", [])], repr(pages)[:300])
check("list paging URLs are absolute", all(str(u).startswith("http") for u in pages.get("paging", {}).values()), repr(pages.get("paging")))
member = body(
    "member add",
    us.lists_members.create(
        domain=DOMAIN,
        address=list_address,
        data={"address": "alice@example.com", "name": "Alice", "vars": json.dumps({"age": 27}), "subscribed": True},
    ),
)
check("member vars come back as an object", member.get("member", {}).get("vars") == {"age": 27}, repr(member))
body("duplicate member", us.lists_members.create(domain=DOMAIN, address=list_address, data={"address": "alice@example.com"}), status=400)
bulk = body(
    "members bulk",
    us.lists_members.create(
        domain=DOMAIN,
        address=list_address,
        multiple=True,
        data={"members": json.dumps(["bob@example.com", {"address": "carol@example.com", "subscribed": False}]), "upsert": "yes"},
    ),
)
check("bulk counts members", bulk.get("list", {}).get("members_count") == 3, repr(bulk))
member_pages = body("member pages", us.lists_members_pages.get(domain=DOMAIN, address=list_address, filters={"limit": 2}))
first_two = [m.get("address") for m in member_pages.get("items", [])]
check("member pages are ordered", first_two == ["alice@example.com", "bob@example.com"], repr(first_two))
# The SDK's own paginator follows the `next` URLs (address pivot) until a page is empty.
walked = [m.get("address") for m in us.lists_members_pages.stream(domain=DOMAIN, address=list_address, filters={"limit": 1})]
check("member paging walks every member once", walked == ["alice@example.com", "bob@example.com", "carol@example.com"], repr(walked))
subscribed = body("subscribed members", us.lists_members.get(domain=DOMAIN, address=list_address, filters={"subscribed": "yes"}))
check("subscribed filter", subscribed.get("total_count") == 2, repr(subscribed))
body("member delete", us.lists_members.delete(domain=DOMAIN, address=list_address, member_address="bob@example.com"))
after = body("list after member delete", us.lists.get(domain=DOMAIN, address=list_address))
check("member count follows", after.get("list", {}).get("members_count") == 2, repr(after))
body("list delete", us.lists.delete(domain=DOMAIN, address=list_address))
body("deleted list is gone", us.lists.get(domain=DOMAIN, address=list_address), status=404)

# --- routes ----------------------------------------------------------------------------------

route = body(
    "route create",
    us.routes.create(
        data={
            "priority": 5,
            "description": f"smoke {run}",
            "expression": f'match_recipient("py-{run}@{DOMAIN}")',
            "action": ['forward("ops@example.com")', "stop()"],
        }
    ),
)
route_id = route.get("route", {}).get("id")
check("route created", bool(route_id) and route["route"].get("actions") == ['forward("ops@example.com")', "stop()"], repr(route))
routes = body("route list", us.routes.get(filters={"limit": 1000}))
check("route listed", route_id in [r.get("id") for r in routes.get("items", [])], repr(routes)[:300])
body("route list over the limit", us.routes.get(filters={"limit": 1001}), status=400)
body("invalid route refused", us.routes.create(data={"expression": "match_recipient(", "action": "stop()"}), status=400)
body("route get", us.routes.get(route_id=route_id))
body("route delete", us.routes.delete(route_id=route_id))
body("deleted route is gone", us.routes.get(route_id=route_id), status=404)

# --- the EU region ---------------------------------------------------------------------------

body("EU domain on the EU host", eu.domains.get(domain_name=EU_DOMAIN))
body("EU domain unknown on the US host", us.domains.get(domain_name=EU_DOMAIN), status=404)
body("US domain unknown on the EU host", eu.domains.get(domain_name=DOMAIN), status=404)
eu_sent = body(
    "EU send",
    eu.messages.create(
        domain=EU_DOMAIN,
        data={"from": f"smoke@{EU_DOMAIN}", "to": f"py-{run}@example.com", "subject": "EU smoke", "text": "hello"},
    ),
)
check("EU send queued", eu_sent.get("message") == "Queued. Thank you.", repr(eu_sent))
# A domain not on the account (here: of the other region) is Mailgun's 401 with the text `Forbidden`.
elsewhere = eu.events.get(domain=DOMAIN)
check("US domain's events on the EU host", (elsewhere.status_code, elsewhere.text) == (401, "Forbidden"),
      f"got {elsewhere.status_code}: {elsewhere.text[:300]}")

# --- leniency: what Mailgun accepts, the sandbox accepts --------------------------------------

hook = body(
    "webhook off this machine",
    us.domains_webhooks.create(domain=DOMAIN, data={"id": "clicked", "url": "https://hooks.example.com/py"}),
)
check("webhook off this machine kept", hook["webhook"]["urls"] == ["https://hooks.example.com/py"], repr(hook))
body("webhook delete", us.domains_webhooks.delete(domain=DOMAIN, webhook_name="clicked"))
pattern = body(
    "route forwarding to a pattern",
    us.routes.create(data={"expression": "catch_all()", "action": ['forward(".*@mg.example.com")'], "priority": 9}),
)
body("pattern route delete", us.routes.delete(route_id=pattern["route"]["id"]))
body("US lists are not in the EU", eu.lists.get(domain=EU_DOMAIN, address=f"developers@{DOMAIN}"), status=404)
print("PASSED python")
