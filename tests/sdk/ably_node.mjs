#!/usr/bin/env node
// Smoke test: the official Ably JavaScript SDK (npm `ably` 2.x, Node) against `opsdeck sandbox`.
//
// Usage: node ably_node.mjs [ABLY_BASE_URL [CONTROL_URL]]
//   The URL (e.g. http://127.0.0.1:7701) comes from argv[2], else $OPSDECK_ABLY_URL, else
//   http://127.0.0.1:7701. The key comes from $ABLY_SANDBOX_KEY (default: the sandbox key).
//   The SDK is imported normally, or from $ABLY_JS_DIR/node_modules when that is set (the runner
//   installs it in a temporary directory).
//
// Runs every check twice, with MessagePack (the SDK default) and with JSON. Prints one line per
// check and exits 1 with the reason at the first failure. Channel names are unique per run, so
// nothing depends on the seeded data (the presence check finds a populated channel by listing).

import { createRequire } from 'node:module';
import { randomBytes } from 'node:crypto';
import { isDeepStrictEqual, inspect } from 'node:util';
import path from 'node:path';

const DEFAULT_KEY = 'opsdeck.sandbox:sandbox-secret';

async function loadAbly() {
  if (process.env.ABLY_JS_DIR) {
    const require = createRequire(path.join(path.resolve(process.env.ABLY_JS_DIR), 'package.json'));
    return require('ably');
  }
  const mod = await import('ably');
  return mod.default ?? mod;
}

class CheckFailed extends Error {}

function expect(cond, what) {
  if (!cond) throw new CheckFailed(what);
}

const show = (v) => inspect(v, { depth: 6, breakLength: Infinity });

class Suite {
  constructor(Ably, host, port, key, binary) {
    this.Ably = Ably;
    this.host = host;
    this.port = port;
    this.key = key;
    this.binary = binary;
    this.mode = binary ? 'msgpack' : 'json';
    this.runId = randomBytes(5).toString('hex');
  }

  client(options = {}) {
    const opts = {
      restHost: this.host,
      port: this.port,
      tls: false,
      useBinaryProtocol: this.binary,
      logLevel: 0,
      ...options,
    };
    if (!('token' in opts) && !('key' in opts)) opts.key = this.key;
    return new this.Ably.Rest(opts);
  }

  channelName(what) {
    // A namespace colon exercises the SDK's path encoding (ably-js sends %3A).
    return `sdk-smoke:js-${this.mode}-${what}-${this.runId}`;
  }

  ok(name, detail) {
    console.log(`ok   [node ${this.mode}] ${name}${detail ? ` (${detail})` : ''}`);
  }

  async expectError(promise, code, statusCode, what) {
    let result;
    try {
      result = await promise;
    } catch (e) {
      expect(
        e && e.code === code && e.statusCode === statusCode,
        `${what}: expected error ${code}/${statusCode}, got ${e && e.code}/${e && e.statusCode} ${show(e && e.message)}`,
      );
      return e;
    }
    throw new CheckFailed(`${what}: expected error ${code}/${statusCode}, but the call succeeded: ${show(result)}`);
  }

  async run() {
    // Basic auth (ably-js sends it over plain HTTP) for most checks; tokens are checked below.
    const rest = this.client();
    await this.checkTime(rest);
    await this.checkPublishHistory(rest);
    await this.checkStatus(rest);
    await this.checkPresence(rest);
    await this.checkTokenAuth();
    await this.checkPush(rest);
    await this.checkBatchPublish(rest);
    await this.checkStats(rest);
    await this.checkWrongKey();
    await this.checkRealtime(rest);
  }

  realtime(options = {}) {
    const opts = {
      restHost: this.host,
      realtimeHost: this.host,
      port: this.port,
      tls: false,
      useBinaryProtocol: this.binary,
      transports: ['web_socket'],
      logLevel: 0,
      ...options,
    };
    if (!('token' in opts) && !('key' in opts)) opts.key = this.key;
    return new this.Ably.Realtime(opts);
  }

  /// Resolves with the next message `channel` receives (bounded).
  nextMessage(channel, what) {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new CheckFailed(`${what}: no message within 10 s`)), 10000);
      const listener = (message) => {
        clearTimeout(timer);
        channel.unsubscribe(listener);
        resolve(message);
      };
      channel.subscribe(listener).catch(reject);
    });
  }

  /// The sandbox drops every socket (as a network blip would); the SDK resumes its connection
  /// and what was published meanwhile arrives once, in order.
  async checkResume(rest, reader, incoming) {
    const before = reader.connection.id;
    const got = [];
    const listener = (m) => got.push(m.name);
    await incoming.subscribe(listener);
    const dropped = await fetch(`${this.control}/ably/realtime/drop`, { method: 'POST' }).then((r) => r.json());
    expect(dropped.dropped >= 1, `control drop: ${show(dropped)}`);
    await rest.channels.get(incoming.name).publish('while-away-1', 'a');
    await rest.channels.get(incoming.name).publish('while-away-2', 'b');
    if (reader.connection.state !== 'connected') await reader.connection.once('connected');
    expect(reader.connection.id === before, `resumed as ${reader.connection.id}, was ${before}`);
    await rest.channels.get(incoming.name).publish('after', 'c');
    const deadline = Date.now() + 20000;
    while (!got.includes('after') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    incoming.unsubscribe(listener);
    expect(isDeepStrictEqual(got, ['while-away-1', 'while-away-2', 'after']), `after the resume: ${show(got)}`);
    this.ok('a dropped socket is resumed: same connection, what was published meanwhile once, in order');
  }

  async checkRealtime(rest) {
    const reader = this.realtime();
    const writer = this.realtime({ clientId: `rt-js-${this.runId}` });
    try {
      await Promise.all([reader.connection.once('connected'), writer.connection.once('connected')]);
      expect(reader.connection.id && reader.connection.key, `connection details: ${show(reader.connection.id)}`);
      this.ok('Realtime connects with the key over a WebSocket', reader.connection.id);

      const name = this.channelName('realtime');
      const incoming = reader.channels.get(name);
      await incoming.attach();
      expect(incoming.state === 'attached', `channel state ${incoming.state}`);
      const arriving = this.nextMessage(incoming, 'a message published on another connection');
      await writer.channels.get(name).publish('rt', { n: 1, text: 'héllo' });
      const message = await arriving;
      expect(message.name === 'rt' && isDeepStrictEqual(message.data, { n: 1, text: 'héllo' }),
        `received: ${show([message.name, message.data])}`);
      expect(message.connectionId === writer.connection.id, `connectionId ${show(message.connectionId)}`);
      expect(message.clientId === `rt-js-${this.runId}`, `clientId ${show(message.clientId)}`);
      this.ok('a message published on one connection arrives on another');

      const fromRest = this.nextMessage(incoming, 'a message published over REST');
      await rest.channels.get(name).publish('from-rest', 'r');
      expect((await fromRest).name === 'from-rest', 'the REST message');
      const page = await rest.channels.get(name).history();
      const names = page.items.map((m) => m.name);
      expect(isDeepStrictEqual(names, ['from-rest', 'rt']), `REST history: ${show(names)}`);
      this.ok('REST publishes reach realtime subscribers; realtime publishes are in the REST history');

      if (this.control) await this.checkResume(rest, reader, incoming);

      const lobby = this.channelName('presence-rt');
      await writer.channels.get(lobby).presence.enter({ mood: 'ready' });
      const members = await reader.channels.get(lobby).presence.get();
      const found = members.map((m) => [m.clientId, m.data]);
      expect(isDeepStrictEqual(found, [[`rt-js-${this.runId}`, { mood: 'ready' }]]), `presence.get(): ${show(found)}`);
      const listed = await rest.channels.get(lobby).presence.get();
      expect(listed.items.some((m) => m.clientId === `rt-js-${this.runId}`), `REST presence: ${show(listed.items)}`);
      this.ok('presence entered on one connection is in presence.get() on another and over REST');

      const limited = await rest.auth.requestToken({ capability: { [name]: ['subscribe'] } });
      const watcher = this.realtime({ token: limited.token });
      try {
        await watcher.connection.once('connected');
        const watched = watcher.channels.get(name);
        await watched.attach();
        await this.expectError(watched.publish('nope', 'x'), 40160, 401, 'realtime publish with a subscribe-only token');
        this.ok('a token connects; its capability refuses a publish with 40160');
      } finally {
        watcher.close();
      }
    } finally {
      reader.close();
      writer.close();
    }
  }

  async checkTime(rest) {
    const t = await rest.time();
    expect(Number.isInteger(t), `time: expected an integer of ms, got ${show(t)}`);
    const skew = Math.abs(t - Date.now());
    expect(skew < 60_000, `time: server time ${t} is ${skew} ms away from local time`);
    this.ok('time', String(t));
  }

  async checkPublishHistory(rest) {
    const name = this.channelName('history');
    this.publishChannel = name;
    const ch = rest.channels.get(name);

    let res = await ch.publish('one', 'hello from node');
    expect(res && Array.isArray(res.serials) && res.serials.length === 1, `publish one: result ${show(res)}`);
    this.ok('publish one message', `serial ${res.serials[0]}`);

    const binary = Buffer.from([0, 1, 2, 254, 255]);
    const json = { n: 2, list: [1, 'x'] };
    res = await ch.publish([
      { name: 'two', data: json },
      { name: 'three', data: binary },
    ]);
    expect(res && res.serials && res.serials.length === 2, `publish array: result ${show(res)}`);
    this.ok('publish an array of messages', `${res.serials.length} serials`);

    const page = await ch.history();
    const got = page.items.map((m) => [m.name, Buffer.isBuffer(m.data) ? [...m.data] : m.data]);
    const want = [['three', [...binary]], ['two', json], ['one', 'hello from node']];
    expect(isDeepStrictEqual(got, want), `history: expected ${show(want)} (newest first), got ${show(got)}`);
    for (const m of page.items) {
      expect(m.id && m.timestamp, `history: message without id/timestamp: ${show(m)}`);
    }
    const ts = page.items.map((m) => m.timestamp);
    expect(isDeepStrictEqual(ts, [...ts].sort((a, b) => b - a)), `history: timestamps not newest first: ${ts}`);
    this.ok('history returns the messages newest first with their data (string, JSON, binary)');

    const fwd = await ch.history({ direction: 'forwards' });
    const fwdNames = fwd.items.map((m) => m.name);
    expect(isDeepStrictEqual(fwdNames, ['one', 'two', 'three']), `history forwards: got ${show(fwdNames)}`);
    this.ok('history direction=forwards is oldest first');

    const p1 = await ch.history({ limit: 2 });
    const n1 = p1.items.map((m) => m.name);
    expect(isDeepStrictEqual(n1, ['three', 'two']), `history limit=2 page 1: got ${show(n1)}`);
    expect(p1.hasNext() && !p1.isLast(), 'history limit=2 page 1: expected a next page');
    const p2 = await p1.next();
    expect(p2, 'history page 2: next() returned null');
    const n2 = p2.items.map((m) => m.name);
    expect(isDeepStrictEqual(n2, ['one']), `history limit=2 page 2: got ${show(n2)}`);
    expect(p2.isLast(), 'history page 2: expected the last page');
    this.ok('history limit=2 pages with next()', '2 + 1 items');

    // rest.request shows the wire: the answer must come back in the protocol's format.
    const raw = await rest.request('get', `/channels/${encodeURIComponent(name)}/messages`, 6, { limit: 2 }, null, {});
    const ctype = String(raw.headers['content-type'] ?? raw.headers['Content-Type'] ?? '');
    const wantType = this.binary ? 'application/x-msgpack' : 'application/json';
    expect(raw.statusCode === 200 && ctype.startsWith(wantType), `request GET messages: ${raw.statusCode}, Content-Type ${show(ctype)}, expected ${wantType}`);
    expect(raw.items.length === 2 && raw.hasNext(), `request GET messages limit=2: ${raw.items.length} items, hasNext ${raw.hasNext()}`);
    const rawNext = await raw.next();
    expect(rawNext && rawNext.items.length === 1 && rawNext.items[0].name === 'one', `request GET messages page 2: ${show(rawNext && rawNext.items)}`);
    this.ok('rest.request GET messages pages with next()', ctype);
  }

  async checkStatus(rest) {
    const name = this.publishChannel;
    const details = await rest.channels.get(name).status();
    expect(details && details.channelId === name, `status: ${show(details)}`);
    expect(details.status && details.status.isActive === true, `status: isActive in ${show(details.status)}`);
    const m = details.status.occupancy && details.status.occupancy.metrics;
    expect(m, `status: no occupancy.metrics in ${show(details.status)}`);
    for (const f of ['connections', 'publishers', 'subscribers', 'presenceConnections', 'presenceMembers', 'presenceSubscribers']) {
      expect(Number.isInteger(m[f]) && m[f] >= 0, `status: metrics.${f} is ${show(m[f])}`);
    }
    this.ok('channel status()', `active, ${m.connections} connections`);
  }

  async checkPresence(rest) {
    const fresh = rest.channels.get(this.channelName('presence'));
    const got = await fresh.presence.get();
    expect(got.items.length === 0, `presence get on a fresh channel: expected [], got ${got.items.length} items`);
    const hist = await fresh.presence.history();
    expect(hist.items.length === 0, `presence history on a fresh channel: expected [], got ${hist.items.length}`);
    this.ok('presence get/history on a fresh channel are empty');

    // Find a channel with members by listing channels (by=value), then compare.
    const list = await rest.request('get', '/channels', 3, { by: 'value', limit: '1000' }, null, {});
    expect(list.statusCode === 200 && list.success, `channel list: ${list.statusCode} ${list.errorCode} ${list.errorMessage}`);
    let populated = null;
    for (const item of list.items) {
      expect(item && typeof item.channelId === 'string', `channel list by=value: bad item ${show(item)}`);
      const members = item.status?.occupancy?.metrics?.presenceMembers ?? 0;
      if (members > 0 && members <= 100) {
        populated = [item.channelId, members];
        break;
      }
    }
    this.ok('channel list (rest.request GET /channels by=value)', `${list.items.length} channels`);
    expect(populated, 'presence: no channel reports presence members, cannot check get');
    const [name, members] = populated;
    const ch = rest.channels.get(name);
    const present = await ch.presence.get();
    expect(present.items.length === members, `presence get ${name}: occupancy says ${members}, get returned ${present.items.length}`);
    for (const p of present.items) {
      expect(p.action === 'present', `presence get ${name}: action ${show(p.action)}, expected 'present'`);
      expect(p.clientId && p.connectionId, `presence get ${name}: member without clientId/connectionId: ${show(p)}`);
    }
    this.ok('presence get on a populated channel', `${name}: ${members} present`);
    const p1 = await ch.presence.get({ limit: 1 });
    expect(p1.items.length === 1, `presence get limit=1: got ${p1.items.length} items`);
    if (members > 1) {
      expect(p1.hasNext(), 'presence get limit=1: expected a next page');
      const p2 = await p1.next();
      expect(p2 && p2.items.length === 1, 'presence get page 2: expected 1 item');
      expect(p2.items[0].clientId !== p1.items[0].clientId || p2.items[0].connectionId !== p1.items[0].connectionId,
        'presence get page 2 repeats page 1');
    }
    this.ok('presence get limit=1 pages with next()');
    const ph = await ch.presence.history({ limit: 5 });
    expect(ph.items.length > 0, `presence history ${name}: empty`);
    for (const p of ph.items) {
      expect(['absent', 'present', 'enter', 'leave', 'update'].includes(p.action), `presence history: action ${show(p.action)}`);
      expect(p.clientId, `presence history: item without clientId: ${show(p)}`);
    }
    const ts = ph.items.map((p) => p.timestamp);
    expect(isDeepStrictEqual(ts, [...ts].sort((a, b) => b - a)), `presence history: not newest first: ${ts}`);
    this.ok('presence history on a populated channel', `${ph.items.length} items, newest first`);
  }

  async checkTokenAuth() {
    const rest = this.client({ useTokenAuth: true });
    const td = await rest.auth.requestToken();
    expect(td && td.token, `requestToken: ${show(td)}`);
    expect(td.expires > td.issued && td.issued > 0, `requestToken: issued ${td.issued} expires ${td.expires}`);
    this.ok('auth.requestToken()', `expires in ${Math.round((td.expires - td.issued) / 1000)} s`);

    // useTokenAuth: the SDK fetches a token itself, then sends Bearer.
    const name = this.channelName('token');
    await rest.channels.get(name).publish('by-token-auth', 'x');
    expect(rest.auth.tokenDetails && rest.auth.tokenDetails.token, 'useTokenAuth: the client holds no token after a call');
    this.ok('useTokenAuth client publishes with a token it requested');

    const tok = this.client({ token: td.token });
    await tok.channels.get(name).publish('by-token', 'y');
    const page = await tok.channels.get(name).history();
    const names = page.items.map((m) => m.name);
    expect(isDeepStrictEqual(names, ['by-token', 'by-token-auth']), `token client history: ${show(names)}`);
    this.ok('a client holding only the token publishes and reads history');

    const clientId = `js-${this.runId}`;
    const bound = await rest.auth.requestToken({ clientId });
    expect(bound.clientId === clientId, `requestToken clientId: ${show(bound.clientId)}`);
    const bc = this.client({ token: bound.token });
    await bc.channels.get(name).publish('by-client', 'z');
    const last = await bc.channels.get(name).history({ limit: 1 });
    const got = last.items.map((m) => [m.name, m.clientId]);
    expect(isDeepStrictEqual(got, [['by-client', clientId]]), `history of a clientId-bound publish: ${show(got)}`);
    this.ok('a token bound to a clientId publishes as that clientId');

    const limited = await rest.auth.requestToken({ capability: { [name]: ['subscribe', 'history'] } });
    const ro = this.client({ token: limited.token });
    await ro.channels.get(name).history();
    await this.expectError(ro.channels.get(name).publish('nope', 'x'), 40160, 401, 'publish with a subscribe-only token');
    await this.expectError(ro.channels.get(this.channelName('other')).history(), 40160, 401,
      "history on a channel outside the token's capability");
    this.ok('a capability-limited token is refused with 40160');
  }

  async checkPush(rest) {
    const admin = rest.push.admin;
    const deviceId = `js${this.mode}${this.runId}`.toUpperCase();
    const clientId = `js-push-${this.runId}`;
    const device = {
      id: deviceId,
      clientId,
      platform: 'browser',
      formFactor: 'desktop',
      metadata: { model: 'smoke' },
      push: {
        recipient: {
          transportType: 'web',
          targetUrl: `https://push.example.test/${this.runId}`,
          publicVapidKey: 'BPublicVapidKeyForSmokeTests',
          encryptionKey: { p256dh: 'BP256dhKeyForSmokeTests', auth: 'authsecret' },
        },
      },
    };
    const saved = await admin.deviceRegistrations.save(device);
    expect(saved && saved.id === deviceId && saved.platform === 'browser' && saved.formFactor === 'desktop',
      `device save: ${show(saved)}`);
    expect(saved.clientId === clientId, `device save: clientId ${show(saved.clientId)}`);
    expect(saved.push && saved.push.recipient && saved.push.recipient.targetUrl === device.push.recipient.targetUrl,
      `device save: push ${show(saved.push)}`);
    this.ok('push device registration save', `state ${saved.push.state}`);

    const got = await admin.deviceRegistrations.get(deviceId);
    expect(got.id === deviceId && got.clientId === clientId && isDeepStrictEqual(got.metadata, { model: 'smoke' }),
      `device get: ${show(got)}`);
    this.ok('push device registration get');

    let list = await admin.deviceRegistrations.list({ deviceId });
    expect(isDeepStrictEqual(list.items.map((d) => d.id), [deviceId]), `device list deviceId=: ${show(list.items.map((d) => d.id))}`);
    list = await admin.deviceRegistrations.list({ clientId });
    expect(isDeepStrictEqual(list.items.map((d) => d.id), [deviceId]), `device list clientId=: ${show(list.items.map((d) => d.id))}`);
    list = await admin.deviceRegistrations.list({ limit: 1 });
    expect(list.items.length === 1, `device list limit=1: ${list.items.length} items`);
    if (list.hasNext()) {
      const more = await list.next();
      expect(more && more.items.length === 1 && more.items[0].id !== list.items[0].id, 'device list page 2');
    }
    this.ok('push device registration list (deviceId, clientId, limit, next())');

    const channel = this.channelName('push');
    const sub = await admin.channelSubscriptions.save({ channel, deviceId });
    expect(sub && sub.channel === channel && sub.deviceId === deviceId, `subscription save: ${show(sub)}`);
    const sub2 = await admin.channelSubscriptions.save({ channel, clientId });
    expect(sub2 && sub2.channel === channel && sub2.clientId === clientId, `subscription save (clientId): ${show(sub2)}`);
    this.ok('push channel subscription save (deviceId and clientId)');

    let subs = await admin.channelSubscriptions.list({ channel });
    let pairs = subs.items.map((s) => [s.deviceId ?? '', s.clientId ?? '']).sort();
    expect(isDeepStrictEqual(pairs, [['', clientId], [deviceId, '']]), `subscription list: ${show(pairs)}`);
    const chans = await admin.channelSubscriptions.listChannels({});
    expect(chans.items.includes(channel), `push channels list: ${channel} missing from ${show(chans.items)}`);
    this.ok('push channel subscription list and listChannels');

    await admin.publish({ deviceId }, { notification: { title: 'smoke', body: 'hi' }, data: { k: 'v' } });
    await admin.publish({ clientId }, { notification: { title: 'smoke 2' } });
    this.ok('push publish (to deviceId and clientId)');

    await admin.channelSubscriptions.remove({ channel, deviceId });
    subs = await admin.channelSubscriptions.list({ channel });
    pairs = subs.items.map((s) => [s.deviceId ?? null, s.clientId ?? null]);
    expect(isDeepStrictEqual(pairs, [[null, clientId]]), `subscription list after remove: ${show(pairs)}`);
    await admin.channelSubscriptions.remove({ channel, clientId });
    subs = await admin.channelSubscriptions.list({ channel });
    expect(subs.items.length === 0, `subscription list after removing both: ${subs.items.length} items`);
    this.ok('push channel subscription remove');

    await admin.deviceRegistrations.remove(deviceId);
    await this.expectError(admin.deviceRegistrations.get(deviceId), 40400, 404, 'device get after remove');
    list = await admin.deviceRegistrations.list({ deviceId });
    expect(list.items.length === 0, 'device list after remove: still listed');
    this.ok('push device registration remove');
  }

  async checkBatchPublish(rest) {
    const a = this.channelName('batch-a');
    const b = this.channelName('batch-b');
    const one = await rest.batchPublish({
      channels: [a, b],
      messages: [{ name: 'batched', data: 'one' }, { name: 'batched', data: 'two' }],
    });
    expect(one && one.successCount === 2 && one.failureCount === 0, `batchPublish(spec): ${show(one)}`);
    const chans = one.results.map((r) => r.channel).sort();
    expect(isDeepStrictEqual(chans, [a, b].sort()), `batchPublish(spec) channels: ${show(one.results)}`);
    for (const r of one.results) {
      expect(r.messageId && Array.isArray(r.serials) && r.serials.length === 2, `batchPublish result: ${show(r)}`);
    }
    this.ok('batchPublish(spec)', '1 spec, 2 channels');

    const many = await rest.batchPublish([
      { channels: [a], messages: [{ name: 'single', data: 'three' }] },
      { channels: [b], messages: [{ name: 'single', data: 'four' }] },
    ]);
    expect(Array.isArray(many) && many.length === 2, `batchPublish([specs]): ${show(many)}`);
    for (const r of many) expect(r.successCount === 1 && r.failureCount === 0, `batchPublish([specs]) result: ${show(r)}`);
    this.ok('batchPublish([specs])', '2 specs');

    let page = await rest.channels.get(a).history();
    let got = page.items.map((m) => m.data);
    expect(isDeepStrictEqual(got, ['three', 'two', 'one']), `history after batch publish (${a}): ${show(got)}`);
    page = await rest.channels.get(b).history();
    got = page.items.map((m) => m.data);
    expect(isDeepStrictEqual(got, ['four', 'two', 'one']), `history after batch publish (${b}): ${show(got)}`);
    this.ok('batch-published messages are in history');
  }

  async checkStats(rest) {
    const page = await rest.stats({ unit: 'minute', limit: 5 });
    expect(page.items.length > 0, 'stats: no records');
    const newest = page.items[0];
    expect(/^\d{4}-\d{2}-\d{2}:\d{2}:\d{2}$/.test(newest.intervalId), `stats: minute intervalId ${show(newest.intervalId)}`);
    expect(newest.entries && typeof newest.entries === 'object', `stats: entries ${show(newest.entries)}`);
    const ids = page.items.map((s) => s.intervalId);
    expect(isDeepStrictEqual(ids, [...ids].sort().reverse()), `stats: not newest first: ${show(ids)}`);
    // This run published messages and push notifications within the last minutes.
    const recent = await rest.stats({ unit: 'minute', start: Date.now() - 5 * 60_000 });
    const total = {};
    for (const s of recent.items) {
      for (const [k, v] of Object.entries(s.entries || {})) total[k] = (total[k] || 0) + v;
    }
    expect((total['apiRequests.all.succeeded'] || 0) > 0, `stats: no apiRequests counted: ${show(total)}`);
    expect((total['push.directPublishes'] || 0) >= 2, `stats: push.directPublishes in ${show(total)}`);
    expect((total['messages.inbound.rest.messages.count'] || 0) >= 3, `stats: messages.inbound.rest.messages.count in ${show(total)}`);
    this.ok('stats (minute, newest first, counts this run)', `newest ${newest.intervalId}`);
    const hours = await rest.stats({ unit: 'hour', limit: 2 });
    expect(hours.items.length >= 1 && /^\d{4}-\d{2}-\d{2}:\d{2}$/.test(hours.items[0].intervalId),
      `stats unit=hour: ${show(hours.items[0])}`);
    if (hours.hasNext()) {
      const more = await hours.next();
      expect(more && more.items.length >= 1, 'stats unit=hour: next() page empty');
    }
    this.ok('stats (hour, limit=2, next())');
  }

  async checkWrongKey() {
    const basic = this.client({ key: 'opsdeck.sandbox:wrong-secret' });
    await this.expectError(basic.channels.get(this.channelName('denied')).history(), 40101, 401,
      'history with a wrong key secret (Basic)');
    const token = this.client({ key: 'opsdeck.sandbox:wrong-secret', useTokenAuth: true });
    await this.expectError(token.channels.get(this.channelName('denied')).history(), 40101, 401,
      'history with a wrong key secret (token auth)');
    this.ok('wrong key is refused with 40101/401 (Basic and token auth)');
  }
}

function baseUrl() {
  const raw = process.argv[2] || process.env.OPSDECK_ABLY_URL || 'http://127.0.0.1:7701';
  let u;
  try {
    u = new URL(raw.includes('://') ? raw : `http://${raw}`);
  } catch {
    u = null;
  }
  if (!u || !u.hostname || !u.port) {
    console.error(`FAIL node: cannot read host and port from ${show(raw)}`);
    process.exit(2);
  }
  return [u.hostname, Number(u.port)];
}

async function main() {
  const [host, port] = baseUrl();
  const key = process.env.ABLY_SANDBOX_KEY || DEFAULT_KEY;
  let Ably;
  try {
    Ably = await loadAbly();
  } catch (e) {
    console.error(`FAIL node: cannot load the ably SDK: ${e.message}`);
    return 1;
  }
  console.log(`ably-js ${Ably.Rest.Platform?.Defaults?.version ?? '?'} against http://${host}:${port}`);
  for (const binary of [true, false]) {
    const suite = new Suite(Ably, host, port, key, binary);
    // The control port (argv[3]) drops the realtime sockets for the resume check.
    suite.control = process.argv[3] || process.env.OPSDECK_CONTROL_URL || '';
    try {
      await suite.run();
    } catch (e) {
      if (e instanceof CheckFailed) {
        console.error(`FAIL [node ${suite.mode}] ${e.message}`);
      } else if (e && typeof e.code === 'number' && 'statusCode' in e) {
        console.error(`FAIL [node ${suite.mode}] unexpected Ably error ${e.code}/${e.statusCode}: ${e.message}`);
      } else {
        console.error(`FAIL [node ${suite.mode}] unexpected ${e && e.stack ? e.stack : show(e)}`);
      }
      return 1;
    }
  }
  console.log('node: all checks passed');
  return 0;
}

process.exitCode = await main();
