#!/usr/bin/env python3
"""Smoke test: the official Ably Python SDK (PyPI `ably` 3.x) against `opsdeck sandbox`.

Usage: ably_python.py [ABLY_BASE_URL [CONTROL_URL]]
  The URL (e.g. http://127.0.0.1:7701) comes from argv[1], else $OPSDECK_ABLY_URL, else
  http://127.0.0.1:7701. The key comes from $ABLY_SANDBOX_KEY (default: the sandbox key).

Runs every check twice, with MessagePack (the SDK default) and with JSON. Prints one line per
check and exits 1 with the reason at the first failure. Channel names are unique per run, so
nothing depends on the seeded data (the presence check finds a populated channel by listing).
"""

import asyncio
import os
import sys
import time
import uuid
from urllib.parse import urlparse

try:
    from ably import AblyRest
    from ably.util.exceptions import AblyException
except ImportError as e:  # the runner installs it; a direct run may not have it
    print(f"FAIL python: cannot import the ably SDK: {e}", file=sys.stderr)
    sys.exit(1)

DEFAULT_KEY = "opsdeck.sandbox:sandbox-secret"


class CheckFailed(Exception):
    pass


class Suite:
    def __init__(self, host, port, key, binary):
        self.host = host
        self.port = port
        self.key = key
        self.binary = binary
        self.mode = "msgpack" if binary else "json"
        self.run_id = uuid.uuid4().hex[:10]
        self.clients = []

    # -- helpers -----------------------------------------------------------------------------

    def client(self, **options):
        opts = dict(rest_host=self.host, port=self.port, tls=False, use_binary_protocol=self.binary,
                    use_token_auth=True)
        if "token" not in options:
            opts["key"] = self.key
        opts.update(options)
        c = AblyRest(**opts)
        self.clients.append(c)
        return c

    def channel_name(self, what):
        # A namespace colon exercises the SDK's path encoding (kept raw in some paths, %3A in others).
        return f"sdk-smoke:py-{self.mode}-{what}-{self.run_id}"

    def ok(self, name, detail=""):
        print(f"ok   [python {self.mode}] {name}" + (f" ({detail})" if detail else ""), flush=True)

    def expect(self, cond, what):
        if not cond:
            raise CheckFailed(what)

    async def expect_error(self, coro, code, status, what):
        try:
            await coro
        except AblyException as e:
            self.expect(e.code == code and e.status_code == status,
                        f"{what}: expected error {code}/{status}, got {e.code}/{e.status_code} {e.message!r}")
            return e
        raise CheckFailed(f"{what}: expected error {code}/{status}, but the call succeeded")

    async def close(self):
        for c in self.clients:
            try:
                await c.close()
            except Exception:
                pass

    # -- checks --------------------------------------------------------------------------------

    async def run(self):
        rest = self.client()
        await self.check_time(rest)
        await self.check_publish_history(rest)
        await self.check_status(rest)
        await self.check_presence(rest)
        await self.check_token_auth(rest)
        await self.check_push(rest)
        await self.check_batch_publish(rest)
        await self.check_stats(rest)
        await self.check_wrong_key()
        await self.check_realtime(rest)

    def realtime(self, **options):
        from ably import AblyRealtime
        # ably-python's WebSocket URL is the host alone (it leaves the port to REST), so the
        # sandbox's port goes into the host.
        opts = dict(realtime_host=f"{self.host}:{self.port}", port=self.port, tls=False, fallback_hosts=[],
                    use_binary_protocol=self.binary)
        if "token" not in options:
            opts["key"] = self.key
        opts.update(options)
        return AblyRealtime(**opts)

    async def connected(self, client):
        state = client.connection.state
        if getattr(state, "value", state) != "connected":
            await asyncio.wait_for(client.connection.once_async("connected"), 10)

    async def check_resume(self, rest, reader, incoming, received):
        """The sandbox drops every socket (a network blip): the SDK resumes its connection and
        what was published meanwhile arrives once, in order."""
        import json
        import urllib.request
        key_before = reader.connection.connection_details.connection_key
        request = urllib.request.Request(f"{self.control}/ably/realtime/drop", method="POST")
        answer = await asyncio.to_thread(lambda: json.loads(urllib.request.urlopen(request, timeout=10).read()))
        self.expect(answer.get("dropped", 0) >= 1, f"control drop: {answer!r}")
        await rest.channels.get(incoming.name).publish("while-away-1", "a")
        await rest.channels.get(incoming.name).publish("while-away-2", "b")
        await asyncio.sleep(0)
        await self.connected(reader)
        await rest.channels.get(incoming.name).publish("after", "c")
        got = []
        while "after" not in got:
            got.append((await asyncio.wait_for(received.get(), 20)).name)
        self.expect(got == ["while-away-1", "while-away-2", "after"], f"after the resume: {got!r}")
        key_after = reader.connection.connection_details.connection_key
        self.expect(key_after == key_before, f"resumed as {key_after!r}, was {key_before!r}")
        self.ok("a dropped socket is resumed: same connection, what was published meanwhile once, in order")

    async def check_realtime(self, rest):
        client_id = f"rt-py-{self.run_id}"
        reader, writer = self.realtime(), self.realtime(client_id=client_id)
        watcher = None
        try:
            await self.connected(reader)
            await self.connected(writer)
            details = reader.connection.connection_details
            self.expect(details and details.connection_key, f"connection details: {details!r}")
            round_trip = await asyncio.wait_for(reader.connection.ping(), 10)
            self.ok("AblyRealtime connects with the key over a WebSocket and answers ping()", f"{round_trip:.1f} ms")

            name = self.channel_name("realtime")
            incoming = reader.channels.get(name)
            received = asyncio.Queue()
            await asyncio.wait_for(incoming.subscribe(received.put_nowait), 10)
            await asyncio.wait_for(writer.channels.get(name).publish("rt", {"n": 1, "text": "héllo"}), 10)
            message = await asyncio.wait_for(received.get(), 10)
            self.expect(message.name == "rt" and message.data == {"n": 1, "text": "héllo"},
                        f"received {message.name!r} {message.data!r}")
            self.expect(isinstance(message.connection_id, str) and message.connection_id,
                        f"connection_id {message.connection_id!r}")
            self.expect(message.client_id == client_id, f"client_id {message.client_id!r}")
            self.ok("a message published on one connection arrives on another")

            await rest.channels.get(name).publish("from-rest", "r")
            from_rest = await asyncio.wait_for(received.get(), 10)
            self.expect(from_rest.name == "from-rest", f"the REST message: {from_rest.name!r}")
            page = await rest.channels.get(name).history()
            names = [m.name for m in page.items]
            self.expect(names == ["from-rest", "rt"], f"REST history: {names!r}")
            self.ok("REST publishes reach realtime subscribers; realtime publishes are in the REST history")

            if self.control:
                await self.check_resume(rest, reader, incoming, received)

            lobby = self.channel_name("presence-rt")
            await asyncio.wait_for(writer.channels.get(lobby).presence.enter({"mood": "ready"}), 10)
            members = await asyncio.wait_for(reader.channels.get(lobby).presence.get(), 10)
            found = [(m.client_id, m.data) for m in members]
            self.expect(found == [(client_id, {"mood": "ready"})], f"presence.get(): {found!r}")
            listed = await rest.channels.get(lobby).presence.get()
            self.expect(any(m.client_id == client_id for m in listed.items), "REST presence lacks the member")
            self.ok("presence entered on one connection is in presence.get() on another and over REST")

            limited = await rest.auth.request_token(token_params={"capability": {name: ["subscribe"]}})
            watcher = self.realtime(token=limited.token)
            await self.connected(watcher)
            watched = watcher.channels.get(name)
            await asyncio.wait_for(watched.attach(), 10)
            await self.expect_error(asyncio.wait_for(watched.publish("nope", "x"), 10), 40160, 401,
                                    "realtime publish with a subscribe-only token")
            self.ok("a token connects; its capability refuses a publish with 40160")
        finally:
            for client in (reader, writer, watcher):
                if client is not None:
                    await client.close()

    async def check_time(self, rest):
        t = await rest.time()
        self.expect(isinstance(t, int), f"time: expected an integer of ms, got {t!r}")
        skew = abs(t - time.time() * 1000)
        self.expect(skew < 60_000, f"time: server time {t} is {skew:.0f} ms away from local time")
        self.ok("time", f"{t}")

    async def check_publish_history(self, rest):
        name = self.channel_name("history")
        ch = rest.channels.get(name)
        self.publish_channel = name

        res = await ch.publish("one", "hello from python")
        self.expect(len(res.serials) == 1, f"publish one: expected 1 serial, got {res.serials!r}")
        self.ok("publish one message", f"serial {res.serials[0]}")

        from ably.types.message import Message
        binary = bytes([0, 1, 2, 254, 255])
        res = await ch.publish(messages=[Message("two", {"n": 2, "list": [1, "x"]}),
                                         Message("three", binary)])
        self.expect(len(res.serials) == 2, f"publish array: expected 2 serials, got {res.serials!r}")
        self.ok("publish an array of messages", f"{len(res.serials)} serials")

        page = await ch.history()
        got = [(m.name, m.data) for m in page.items]
        want = [("three", binary), ("two", {"n": 2, "list": [1, "x"]}), ("one", "hello from python")]
        self.expect(got == want, f"history: expected {want!r} (newest first), got {got!r}")
        for m in page.items:
            self.expect(m.id and m.timestamp, f"history: message without id/timestamp: {m.id!r} {m.timestamp!r}")
        ts = [m.timestamp for m in page.items]
        self.expect(ts == sorted(ts, reverse=True), f"history: timestamps not newest first: {ts}")
        ctype = page.response.headers.get("content-type", "")
        want_type = "application/x-msgpack" if self.binary else "application/json"
        self.expect(ctype.startswith(want_type), f"history: Content-Type {ctype!r}, expected {want_type}")
        self.ok("history returns the messages newest first with their data (string, JSON, binary)", ctype)

        fwd = await ch.history(direction="forwards")
        self.expect([m.name for m in fwd.items] == ["one", "two", "three"],
                    f"history forwards: got {[m.name for m in fwd.items]}")
        self.ok("history direction=forwards is oldest first")

        p1 = await ch.history(limit=2)
        self.expect([m.name for m in p1.items] == ["three", "two"],
                    f"history limit=2 page 1: got {[m.name for m in p1.items]}")
        self.expect(p1.has_next() and not p1.is_last(), "history limit=2 page 1: expected a next page")
        p2 = await p1.next()
        self.expect(p2 is not None, "history page 2: next() returned None")
        self.expect([m.name for m in p2.items] == ["one"], f"history limit=2 page 2: got {[m.name for m in p2.items]}")
        self.expect(p2.is_last(), "history page 2: expected the last page")
        self.ok("history limit=2 pages with next()", "2 + 1 items")

    async def check_status(self, rest):
        name = self.publish_channel
        details = await rest.channels.get(name).status()
        self.expect(details.channel_id == name, f"status: channelId {details.channel_id!r} != {name!r}")
        self.expect(details.status.is_active is True, f"status: isActive is {details.status.is_active!r}")
        m = details.status.occupancy.metrics
        for field in ("connections", "publishers", "subscribers", "presence_connections", "presence_members",
                      "presence_subscribers"):
            v = getattr(m, field)
            self.expect(isinstance(v, int) and v >= 0, f"status: metrics.{field} is {v!r}")
        self.ok("channel status()", f"active, {m.connections} connections")

    async def check_presence(self, rest):
        # A fresh channel has nobody present (REST cannot enter presence).
        ch = rest.channels.get(self.channel_name("presence"))
        got = await ch.presence.get()
        self.expect(got.items == [], f"presence get on a fresh channel: expected [], got {len(got.items)} items")
        hist = await ch.presence.history()
        self.expect(hist.items == [], f"presence history on a fresh channel: expected [], got {len(hist.items)}")
        self.ok("presence get/history on a fresh channel are empty")

        # Find a channel with members by listing channels (by=value), then compare.
        lst = await rest.request("GET", "/channels", version="3", params={"by": "value", "limit": "1000"})
        self.expect(lst.status_code == 200, f"channel list: status {lst.status_code} {lst.error_message!r}")
        populated = None
        for item in lst.items:
            self.expect(isinstance(item, dict) and "channelId" in item, f"channel list by=value: bad item {item!r}")
            members = item.get("status", {}).get("occupancy", {}).get("metrics", {}).get("presenceMembers", 0)
            if members and members <= 100:
                populated = (item["channelId"], members)
                break
        self.ok("channel list (rest.request GET /channels by=value)", f"{len(lst.items)} channels")
        self.expect(populated is not None, "presence: no channel reports presence members, cannot check get")
        name, members = populated
        ch = rest.channels.get(name)
        got = await ch.presence.get()
        self.expect(len(got.items) == members,
                    f"presence get {name}: occupancy says {members} members, get returned {len(got.items)}")
        for p in got.items:
            self.expect(p.action == 1, f"presence get {name}: action {p.action!r}, expected 1 (present)")
            self.expect(p.client_id and p.connection_id, f"presence get {name}: member without clientId/connectionId")
        self.ok("presence get on a populated channel", f"{name}: {members} present")
        p1 = await ch.presence.get(limit=1)
        self.expect(len(p1.items) == 1, f"presence get limit=1: got {len(p1.items)} items")
        if members > 1:
            self.expect(p1.has_next(), "presence get limit=1: expected a next page")
            p2 = await p1.next()
            self.expect(p2 is not None and len(p2.items) == 1, "presence get page 2: expected 1 item")
        self.ok("presence get limit=1 pages with next()")
        hist = await ch.presence.history(limit=5)
        self.expect(len(hist.items) > 0, f"presence history {name}: empty")
        for p in hist.items:
            self.expect(p.action in (0, 1, 2, 3, 4), f"presence history: action {p.action!r}")
            self.expect(p.client_id, "presence history: item without clientId")
        ts = [p.timestamp for p in hist.items]
        self.expect(ts == sorted(ts, reverse=True), f"presence history: not newest first: {ts}")
        self.ok("presence history on a populated channel", f"{len(hist.items)} items, newest first")

    async def check_token_auth(self, rest):
        td = await rest.auth.request_token()
        self.expect(td.token, "requestToken: empty token")
        self.expect(td.expires > td.issued > 0, f"requestToken: issued {td.issued} expires {td.expires}")
        self.ok("auth.request_token()", f"expires in {(td.expires - td.issued) / 1000:.0f} s")

        tok = self.client(token=td.token)
        name = self.channel_name("token")
        await tok.channels.get(name).publish("by-token", "x")
        page = await tok.channels.get(name).history()
        self.expect([m.name for m in page.items] == ["by-token"], f"token client history: {page.items!r}")
        self.ok("a client holding only the token publishes and reads history")

        client_id = f"py-{self.run_id}"
        bound = await rest.auth.request_token(token_params={"client_id": client_id})
        self.expect(bound.client_id == client_id, f"requestToken clientId: {bound.client_id!r}")
        tok = self.client(token=bound.token)
        await tok.channels.get(name).publish("by-client", "y")
        page = await tok.channels.get(name).history(limit=1)
        got = [(m.name, m.client_id) for m in page.items]
        self.expect(got == [("by-client", client_id)], f"history of a clientId-bound publish: {got}")
        self.ok("a token bound to a clientId publishes as that clientId")

        limited = await rest.auth.request_token(token_params={"capability": {name: ["subscribe", "history"]}})
        ro = self.client(token=limited.token)
        page = await ro.channels.get(name).history()
        self.expect(len(page.items) == 2, "limited token: history should be allowed")
        await self.expect_error(ro.channels.get(name).publish("nope", "x"), 40160, 401,
                                "publish with a subscribe-only token")
        await self.expect_error(ro.channels.get(self.channel_name("other")).history(), 40160, 401,
                                "history on a channel outside the token's capability")
        self.ok("a capability-limited token is refused with 40160")

    async def check_push(self, rest):
        admin = rest.push.admin
        device_id = f"py{self.mode}{self.run_id}".upper()
        client_id = f"py-push-{self.run_id}"
        device = {
            "id": device_id,
            "clientId": client_id,
            "platform": "android",
            "formFactor": "phone",
            "metadata": {"model": "smoke"},
            "push": {"recipient": {"transportType": "fcm", "registrationToken": f"tok-{self.run_id}"}},
        }
        saved = await admin.device_registrations.save(device)
        self.expect(saved.id == device_id and saved.platform == "android" and saved.form_factor == "phone",
                    f"device save: got id={saved.id!r} platform={saved.platform!r} formFactor={saved.form_factor!r}")
        self.expect(saved.client_id == client_id, f"device save: clientId {saved.client_id!r}")
        self.expect((saved.push or {}).get("recipient", {}).get("registrationToken") == f"tok-{self.run_id}",
                    f"device save: push {saved.push!r}")
        self.ok("push device registration save", f"state {(saved.push or {}).get('state')}")

        got = await admin.device_registrations.get(device_id)
        self.expect(got.id == device_id and got.client_id == client_id and got.metadata == {"model": "smoke"},
                    f"device get: id={got.id!r} clientId={got.client_id!r} metadata={got.metadata!r}")
        self.ok("push device registration get")

        lst = await admin.device_registrations.list(deviceId=device_id)
        self.expect([d.id for d in lst.items] == [device_id], f"device list deviceId=: {[d.id for d in lst.items]}")
        lst = await admin.device_registrations.list(clientId=client_id)
        self.expect([d.id for d in lst.items] == [device_id], f"device list clientId=: {[d.id for d in lst.items]}")
        lst = await admin.device_registrations.list(limit=1)
        self.expect(len(lst.items) == 1, f"device list limit=1: {len(lst.items)} items")
        self.ok("push device registration list (deviceId, clientId, limit)")

        channel = self.channel_name("push")
        sub = await admin.channel_subscriptions.save({"channel": channel, "deviceId": device_id})
        self.expect(sub.channel == channel and sub.device_id == device_id,
                    f"subscription save: {sub.channel!r} {sub.device_id!r}")
        sub2 = await admin.channel_subscriptions.save({"channel": channel, "clientId": client_id})
        self.expect(sub2.channel == channel and sub2.client_id == client_id,
                    f"subscription save (clientId): {sub2.channel!r} {sub2.client_id!r}")
        self.ok("push channel subscription save (deviceId and clientId)")

        lst = await admin.channel_subscriptions.list(channel=channel)
        got = sorted((s.device_id or "", s.client_id or "") for s in lst.items)
        self.expect(got == sorted([(device_id, ""), ("", client_id)]), f"subscription list: {got}")
        chans = await admin.channel_subscriptions.list_channels()
        self.expect(channel in chans.items, f"push channels list: {channel} missing")
        self.ok("push channel subscription list and list_channels")

        await admin.publish({"deviceId": device_id}, {"notification": {"title": "smoke", "body": "hi"},
                                                      "data": {"k": "v"}})
        await admin.publish({"clientId": client_id}, {"notification": {"title": "smoke 2"}})
        self.ok("push publish (to deviceId and clientId)")

        await admin.channel_subscriptions.remove({"channel": channel, "deviceId": device_id})
        lst = await admin.channel_subscriptions.list(channel=channel)
        got = [(s.device_id, s.client_id) for s in lst.items]
        self.expect(got == [(None, client_id)], f"subscription list after remove: {got}")
        await admin.channel_subscriptions.remove({"channel": channel, "clientId": client_id})
        lst = await admin.channel_subscriptions.list(channel=channel)
        self.expect(lst.items == [], f"subscription list after removing both: {len(lst.items)} items")
        self.ok("push channel subscription remove")

        await admin.device_registrations.remove(device_id)
        await self.expect_error(admin.device_registrations.get(device_id), 40400, 404, "device get after remove")
        lst = await admin.device_registrations.list(deviceId=device_id)
        self.expect(lst.items == [], "device list after remove: still listed")
        self.ok("push device registration remove")

    async def check_batch_publish(self, rest):
        a, b = self.channel_name("batch-a"), self.channel_name("batch-b")
        body = [{"channels": [a, b], "messages": [{"name": "batched", "data": "one"},
                                                  {"name": "batched", "data": "two"}]},
                {"channels": a, "messages": {"name": "single", "data": "three"}}]
        res = await rest.request("POST", "/messages", version="5", body=body)
        self.expect(res.success, f"batch publish: status {res.status_code} {res.error_code} {res.error_message!r}")
        self.expect(len(res.items) == 2, f"batch publish: expected 2 results, got {res.items!r}")
        first, second = res.items
        self.expect(first.get("successCount") == 2 and first.get("failureCount") == 0,
                    f"batch publish result 1: {first!r}")
        self.expect(sorted(r.get("channel") for r in first.get("results", [])) == sorted([a, b]),
                    f"batch publish result 1 channels: {first!r}")
        for r in first["results"]:
            self.expect(r.get("messageId") and len(r.get("serials", [])) == 2, f"batch publish result: {r!r}")
        self.expect(second.get("successCount") == 1, f"batch publish result 2: {second!r}")
        self.ok("batch publish (rest.request POST /messages)", "2 specs, 3 channel publishes")

        page = await rest.channels.get(a).history()
        self.expect([(m.name, m.data) for m in page.items] == [("single", "three"), ("batched", "two"),
                                                                ("batched", "one")],
                    f"history after batch publish ({a}): {[(m.name, m.data) for m in page.items]}")
        page = await rest.channels.get(b).history()
        self.expect([m.data for m in page.items] == ["two", "one"], f"history after batch publish ({b})")
        self.ok("batch-published messages are in history")

    async def check_stats(self, rest):
        page = await rest.stats(unit="minute", limit=5)
        self.expect(len(page.items) > 0, "stats: no records")
        newest = page.items[0]
        self.expect(newest.unit == "minute" and newest.interval_id, f"stats: unit {newest.unit!r}")
        self.expect(isinstance(newest.entries, dict), f"stats: entries {newest.entries!r}")
        ids = [s.interval_id for s in page.items]
        self.expect(ids == sorted(ids, reverse=True), f"stats: not newest first: {ids}")
        # This run published messages and push notifications within the last minutes.
        recent = await rest.stats(unit="minute", start=int(time.time() * 1000) - 5 * 60_000)
        total = {}
        for s in recent.items:
            for k, v in (s.entries or {}).items():
                total[k] = total.get(k, 0) + v
        self.expect(total.get("apiRequests.all.succeeded", 0) > 0, f"stats: no apiRequests counted: {total}")
        self.expect(total.get("push.directPublishes", 0) >= 2, f"stats: push.directPublishes {total}")
        self.expect(total.get("messages.inbound.rest.messages.count", 0) >= 3,
                    f"stats: messages.inbound.rest.messages.count {total}")
        self.ok("stats (minute, newest first, counts this run)", f"newest {newest.interval_id}")
        hours = await rest.stats(unit="hour", limit=2)
        self.expect(len(hours.items) >= 1 and hours.items[0].unit == "hour", "stats unit=hour")
        if hours.has_next():
            more = await hours.next()
            self.expect(more is not None and len(more.items) >= 1, "stats unit=hour: next() page empty")
        self.ok("stats (hour, limit=2, next())")

    async def check_wrong_key(self):
        bad = self.client(key="opsdeck.sandbox:wrong-secret")
        await self.expect_error(bad.channels.get(self.channel_name("denied")).history(), 40101, 401,
                                "history with a wrong key secret")
        bad = self.client(key="opsdeck.nosuchkey:sandbox-secret")
        await self.expect_error(bad.auth.request_token(), 40101, 401, "requestToken with an unknown key name")
        self.ok("wrong key is refused with 40101/401")


def base_url():
    url = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("OPSDECK_ABLY_URL", "http://127.0.0.1:7701")
    u = urlparse(url if "://" in url else f"http://{url}")
    if not u.hostname or not u.port:
        print(f"FAIL python: cannot read host and port from {url!r}", file=sys.stderr)
        sys.exit(2)
    return u.hostname, u.port


async def main():
    host, port = base_url()
    key = os.environ.get("ABLY_SANDBOX_KEY", DEFAULT_KEY)
    import ably
    print(f"ably-python {getattr(ably, 'lib_version', '?')} against http://{host}:{port}", flush=True)
    for binary in (True, False):
        suite = Suite(host, port, key, binary)
        # The control port drops the realtime sockets for the resume check.
        suite.control = sys.argv[2] if len(sys.argv) > 2 else os.environ.get("OPSDECK_CONTROL_URL", "")
        try:
            await suite.run()
        except CheckFailed as e:
            print(f"FAIL [python {suite.mode}] {e}", file=sys.stderr, flush=True)
            return 1
        except AblyException as e:
            print(f"FAIL [python {suite.mode}] unexpected Ably error {e.code}/{e.status_code}: {e.message}",
                  file=sys.stderr, flush=True)
            import traceback
            traceback.print_exc()
            return 1
        except Exception as e:
            print(f"FAIL [python {suite.mode}] unexpected {type(e).__name__}: {e}", file=sys.stderr, flush=True)
            import traceback
            traceback.print_exc()
            return 1
        finally:
            await suite.close()
    print("python: all checks passed", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
