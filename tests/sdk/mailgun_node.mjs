// Smoke test: the official Mailgun Node SDK (npm `mailgun.js` 14 with `form-data`) against
// `opsdeck sandbox`.
//
// Usage: MAILGUN_JS_DIR=<dir with node_modules/mailgun.js and form-data> \
//        node mailgun_node.mjs [US_BASE_URL] [EU_BASE_URL]
//        (defaults $OPSDECK_MAILGUN_URL / $OPSDECK_MAILGUN_EU_URL, else http://127.0.0.1:7706 / :7707)
// Sends a message with two attachments from mg.example.com and waits (bounded) for its
// `delivered` event; creates, lists, reads and deletes a bounce; creates a mailing list, adds
// members one at a time and in bulk, pages through them (the SDK follows the absolute `paging`
// URLs) and deletes them; creates, lists, reads and deletes a route; then checks the EU region
// (the US domain there: 401 `Forbidden`) and that a webhook URL off this machine and a route
// forwarding to a pattern are accepted, as Mailgun accepts them.
// Names carry a per-run id. Prints one line per check and exits 1 at the first failure.
import { createRequire } from "node:module";
import { randomUUID } from "node:crypto";
import path from "node:path";

const require = createRequire(path.join(process.env.MAILGUN_JS_DIR || process.cwd(), "package.json"));
const MailgunModule = require("mailgun.js");
const Mailgun = MailgunModule.default || MailgunModule;
const FormData = require("form-data");

const usUrl = (process.argv[2] || process.env.OPSDECK_MAILGUN_URL || "http://127.0.0.1:7706").replace(/\/$/, "");
const euUrl = (process.argv[3] || process.env.OPSDECK_MAILGUN_EU_URL || "http://127.0.0.1:7707").replace(/\/$/, "");
const key = process.env.MAILGUN_SANDBOX_KEY || "sandbox-mailgun-key";
const DOMAIN = "mg.example.com";
const EU_DOMAIN = "mg.example.eu";
const EVENT_WAIT_MS = Number(process.env.MAILGUN_EVENT_WAIT || 30) * 1000;
const run = randomUUID().slice(0, 10);

const mailgun = new Mailgun(FormData);
const us = mailgun.client({ username: "api", key, url: usUrl });
const eu = mailgun.client({ username: "api", key, url: euUrl });
// events.get is deprecated in v14 in favour of logs; it still calls /v3/{domain}/events, which
// is what this checks, so its warning is noise here.
const quiet = { warn() {}, log: console.log, error: console.error };
if (us.events && "logger" in us.events) us.events.logger = quiet;

function check(name, condition, detail = "") {
  if (!condition) {
    console.error(`FAIL node: ${name} ${detail}`);
    process.exit(1);
  }
  console.log(`ok node: ${name}`);
}

// Runs `call`, which must fail with HTTP `status`.
async function refused(name, status, call) {
  try {
    const answer = await call();
    check(name, false, `expected ${status}, got success: ${JSON.stringify(answer)}`);
  } catch (e) {
    check(name, e.status === status, `expected ${status}, got ${e.status}: ${e.message || e}`);
  }
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// --- sending with two attachments, then its events ----------------------------------------------

const recipient = `node-${run}@example.com`;
const sent = await us.messages.create(DOMAIN, {
  from: `Smoke <smoke@${DOMAIN}>`,
  to: [recipient],
  subject: `opsdeck smoke ${run}`,
  text: "Two attachments follow.",
  "o:tag": ["sdk-smoke"],
  "v:run": JSON.stringify({ id: run }),
  attachment: [
    { filename: "invoice.txt", data: Buffer.from("invoice 42\n") },
    { filename: "terms.csv", data: Buffer.from("clause,text\n1,be nice\n") },
  ],
});
check("send queued", sent.message === "Queued. Thank you." && String(sent.id).startsWith("<"), JSON.stringify(sent));
const bareId = String(sent.id).replace(/^<|>$/g, "");

async function eventsOf(kind) {
  const page = await us.events.get(DOMAIN, { event: kind, recipient, limit: 50 });
  return (page.items || []).filter((e) => e.message?.headers?.["message-id"] === bareId);
}

const accepted = await eventsOf("accepted");
check("accepted event", accepted.length === 1, JSON.stringify(accepted));
const names = (accepted[0].message?.attachments || []).map((a) => a.filename).sort();
check("accepted event lists both attachments", JSON.stringify(names) === '["invoice.txt","terms.csv"]', JSON.stringify(names));
let delivered = [];
for (const deadline = Date.now() + EVENT_WAIT_MS; Date.now() < deadline; await sleep(500)) {
  delivered = await eventsOf("delivered");
  if (delivered.length) break;
}
check(`delivered event within ${EVENT_WAIT_MS / 1000}s`, delivered.length === 1, JSON.stringify(delivered));
check("delivered event names the recipient", delivered[0].recipient === recipient, JSON.stringify(delivered[0]));

// --- bounces (mailgun.js posts them as a JSON array) ----------------------------------------------

const bounced = `bounce-${run}@example.net`;
const bounceMade = await us.suppressions.create(DOMAIN, "bounces", { address: bounced, code: 550, error: "smoke" });
check("bounce created", bounceMade.status === 200, JSON.stringify(bounceMade));
const bounces = await us.suppressions.list(DOMAIN, "bounces", { limit: 1000 });
check("bounce listed", bounces.items.some((b) => b.address === bounced), JSON.stringify(bounces.items).slice(0, 300));
const bounce = await us.suppressions.get(DOMAIN, "bounces", bounced);
check("bounce read back", Number(bounce.code) === 550 && bounce.error === "smoke", JSON.stringify(bounce));
await us.suppressions.destroy(DOMAIN, "bounces", bounced);
await refused("deleted bounce is gone", 404, () => us.suppressions.get(DOMAIN, "bounces", bounced));

// --- mailing lists and members ----------------------------------------------------------------

const seeded = await us.lists.get(`developers@${DOMAIN}`);
check("seeded list has its members", seeded.members_count === 3, JSON.stringify(seeded));
const listAddress = `node-${run}@${DOMAIN}`;
const made = await us.lists.create({ address: listAddress, name: "Smoke", access_level: "members" });
check("list created", made.address === listAddress && made.access_level === "members", JSON.stringify(made));
await refused("bad access level", 400, () => us.lists.create({ address: `bad-${run}@${DOMAIN}`, access_level: "nobody" }));
const lists = await us.lists.list({ limit: 100 });
check("list in pages", lists.items.some((l) => l.address === listAddress), JSON.stringify(lists.items).slice(0, 300));
check("list paging parsed", ["first", "last", "next", "previous"].every((k) => lists.pages?.[k]?.url), JSON.stringify(lists.pages));
const member = await us.lists.members.createMember(listAddress, {
  address: "alice@example.com",
  name: "Alice",
  vars: { age: 27 },
  subscribed: true,
});
check("member vars come back as an object", member.vars?.age === 27 && member.subscribed === true, JSON.stringify(member));
await refused("duplicate member", 400, () => us.lists.members.createMember(listAddress, { address: "alice@example.com" }));
const bulk = await us.lists.members.createMembers(listAddress, {
  members: ["bob@example.com", { address: "carol@example.com", subscribed: false }],
  upsert: "yes",
});
check("bulk counts members", bulk.list?.members_count === 3, JSON.stringify(bulk));
// Walk the member pages as the SDK does: `page` is the query of the previous answer's `next`.
const walked = [];
let page = await us.lists.members.listMembers(listAddress, { limit: 1 });
for (let i = 0; i < 10 && page.items.length; i++) {
  walked.push(...page.items.map((m) => m.address));
  page = await us.lists.members.listMembers(listAddress, { page: page.pages.next.page });
}
check(
  "member paging walks every member once",
  JSON.stringify(walked) === '["alice@example.com","bob@example.com","carol@example.com"]',
  JSON.stringify(walked),
);
const subscribed = await us.lists.members.listMembersByAddress(listAddress, { subscribed: "yes" });
check("subscribed filter", subscribed.total_count === 2, JSON.stringify(subscribed));
await us.lists.members.destroyMember(listAddress, "bob@example.com");
const after = await us.lists.get(listAddress);
check("member count follows", after.members_count === 2, JSON.stringify(after));
await us.lists.destroy(listAddress);
await refused("deleted list is gone", 404, () => us.lists.get(listAddress));

// --- routes ----------------------------------------------------------------------------------

const route = await us.routes.create({
  priority: 5,
  description: `smoke ${run}`,
  expression: `match_recipient("node-${run}@${DOMAIN}")`,
  action: ['forward("ops@example.com")', "stop()"],
});
check(
  "route created",
  Boolean(route?.id) && JSON.stringify(route.actions) === JSON.stringify(['forward("ops@example.com")', "stop()"]),
  JSON.stringify(route),
);
const routes = await us.routes.list({ limit: 1000 });
check("route listed", routes.some((r) => r.id === route.id), JSON.stringify(routes).slice(0, 300));
await refused("route list over the limit", 400, () => us.routes.list({ limit: 1001 }));
await refused("invalid route refused", 400, () => us.routes.create({ expression: "match_recipient(", action: ["stop()"] }));
const updated = await us.routes.update(route.id, { priority: 6 });
check("route update answers flat fields", updated.priority === 6 && updated.message === "Route has been updated", JSON.stringify(updated));
const got = await us.routes.get(route.id);
check("route read back", got.priority === 6, JSON.stringify(got));
await us.routes.destroy(route.id);
await refused("deleted route is gone", 404, () => us.routes.get(route.id));

// --- the EU region ----------------------------------------------------------------------------

const euDomain = await eu.domains.get(EU_DOMAIN);
check("EU domain on the EU host", euDomain.name === EU_DOMAIN, JSON.stringify(euDomain));
await refused("EU domain unknown on the US host", 404, () => us.domains.get(EU_DOMAIN));
await refused("US domain unknown on the EU host", 404, () => eu.domains.get(DOMAIN));
const euSent = await eu.messages.create(EU_DOMAIN, {
  from: `smoke@${EU_DOMAIN}`,
  to: [recipient],
  subject: "EU smoke",
  text: "hello",
});
check("EU send queued", euSent.message === "Queued. Thank you.", JSON.stringify(euSent));
await refused("US lists are not in the EU", 404, () => eu.lists.get(`developers@${DOMAIN}`));
// A domain not on the account (here: of the other region) is Mailgun's 401 with the text `Forbidden`.
try {
  await eu.events.get(DOMAIN);
  check("US domain's events on the EU host", false, "expected 401, got success");
} catch (e) {
  check("US domain's events on the EU host", e.status === 401 && e.details === "Forbidden", `${e.status}: ${e.details}`);
}

// --- leniency: what Mailgun accepts, the sandbox accepts ------------------------------------------

const hook = await us.webhooks.create(DOMAIN, "clicked", "https://hooks.example.com/node");
check("webhook off this machine kept", JSON.stringify(hook.urls) === '["https://hooks.example.com/node"]', JSON.stringify(hook));
await us.webhooks.destroy(DOMAIN, "clicked");
const pattern = await us.routes.create({ expression: "catch_all()", action: ['forward(".*@mg.example.com")'], priority: 9 });
check("route forwarding to a pattern", pattern.actions[0] === 'forward(".*@mg.example.com")', JSON.stringify(pattern));
await us.routes.destroy(pattern.id);
console.log("PASSED node");
