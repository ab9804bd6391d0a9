// Smoke test: the official EasyPost Node SDK (npm `@easypost/api` 8) against `opsdeck sandbox`.
//
// Usage: EASYPOST_JS_DIR=<dir with node_modules/@easypost/api> node easypost_node.mjs [BASE_URL]
//        (default $OPSDECK_EASYPOST_URL, else http://127.0.0.1:7708/v2 -- the URL the sandbox prints,
//        with EasyPost's /v2, which is appended when missing; the SDK's baseUrl is it plus "/")
// Creates and verifies addresses (a strict verify of an address without a house number must fail
// with ADDRESS.VERIFY.FAILURE); creates a shipment, buys its lowest rate (the SDK's `lowestRate`),
// fetches the PNG label and its PDF and ZPL conversions over HTTP; buying twice and a 404 come
// back as the SDK's mapped error classes; tracks EZ4000000004 and the bought code, and walks the
// tracker list with `getNextPage`; refunds the shipment; creates a batch of two shipments (one
// given whole with its carrier and service, one by id) and waits (bounded) for it to be created,
// purchased and labelled (PDF), then makes its scan form; a webhook receives the batch's events on
// a loopback listener, signed so that the SDK's `validateWebhook` accepts them, then is updated,
// listed and deleted. References carry a per-run id. Prints one line per check and exits 1 at the
// first failure.
//
// @easypost/api does not export its error classes and its bundle minifies their names, so an
// error's class is checked through what the SDK's error handler sets (statusCode, code) and by
// comparing classes: every 404 one class, every 422 another, both subclasses of one ApiError.
import { createRequire } from "node:module";
import { randomUUID } from "node:crypto";
import http from "node:http";
import path from "node:path";

const require = createRequire(path.join(process.env.EASYPOST_JS_DIR || process.cwd(), "package.json"));
const EasyPostModule = require("@easypost/api");
const EasyPostClient = EasyPostModule.default || EasyPostModule;

let baseUrl = (process.argv[2] || process.env.OPSDECK_EASYPOST_URL || "http://127.0.0.1:7708/v2").replace(/\/+$/, "");
if (!baseUrl.endsWith("/v2")) baseUrl += "/v2";
const key = process.env.EASYPOST_SANDBOX_KEY || "EZTKsandbox";
const WAIT_MS = Number(process.env.EASYPOST_WAIT || 30) * 1000;
const run = randomUUID().slice(0, 10);

const client = new EasyPostClient(key, { baseUrl: `${baseUrl}/` });

function check(name, condition, detail = "") {
  if (!condition) {
    console.error(`FAIL node: ${name} ${detail}`);
    process.exit(1);
  }
  console.log(`ok node: ${name}`);
}

const errorClasses = {};

// Runs `call`, which must fail through the SDK's error handler with HTTP `status` (and `code`).
async function refused(name, status, call, code = null) {
  let answer;
  try {
    answer = await call();
  } catch (e) {
    const detail = `got ${e?.constructor?.name} ${e?.statusCode} ${e?.code}: ${e?.message || e}`;
    const mapped = typeof e?.statusCode === "number" && !("response" in e);
    check(name, mapped && e.statusCode === status && (code === null || e.code === code), detail);
    errorClasses[status] ??= e.constructor;
    check(`${name}: the SDK's class for ${status}`, e.constructor === errorClasses[status], detail);
    return e;
  }
  check(name, false, `expected ${status}, got success: ${JSON.stringify(answer)}`.slice(0, 400));
  return null;
}

async function fetchFile(url) {
  const response = await fetch(url, { signal: AbortSignal.timeout(10_000) });
  return { bytes: Buffer.from(await response.arrayBuffer()), type: response.headers.get("content-type") || "" };
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// Polls `read()` until `done(value)`, at most WAIT_MS; the last value read.
async function waitFor(what, read, done) {
  const deadline = Date.now() + WAIT_MS;
  let value = await read();
  while (!done(value) && Date.now() < deadline) {
    await sleep(500);
    value = await read();
  }
  check(`${what} within ${WAIT_MS / 1000}s`, done(value), JSON.stringify(value).slice(0, 400));
  return value;
}

const minRate = (rates) => Math.min(...rates.map((r) => parseFloat(r.rate)));

// --- a webhook receiver on loopback ------------------------------------------------------------

const received = []; // { headers, body }
const receiver = http.createServer((req, res) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    received.push({ headers: req.headers, body: Buffer.concat(chunks) });
    res.writeHead(200, { "Content-Length": "0" });
    res.end();
  });
});
await new Promise((resolve) => receiver.listen(0, "127.0.0.1", resolve));
const hookUrl = `http://127.0.0.1:${receiver.address().port}/easypost/${run}`;
const secret = `s3cret-${run}`;
const hook = await client.Webhook.create({ url: hookUrl, webhook_secret: secret });
check("webhook created", hook.id.startsWith("hook_") && hook.url === hookUrl, JSON.stringify(hook));

// --- addresses ---------------------------------------------------------------------------------

const TO = { name: "Dr. Steve Brule", street1: "179 N Harbor Dr", city: "Redondo Beach", state: "CA", zip: "90277",
  country: "US", email: "steve@example.com" };
const FROM = { name: "EasyPost", street1: "417 Montgomery St", street2: "5th Floor", city: "San Francisco",
  state: "CA", zip: "94104", country: "US", phone: "4153334444" };

const plain = await client.Address.create({ ...TO });
check("address created", plain.id.startsWith("adr_") && plain.street1 === TO.street1, JSON.stringify(plain));
const verified = await client.Address.verifyAddress(plain.id);
const delivery = verified.verifications?.delivery;
check("address verify", verified.id !== plain.id && delivery?.success === true, JSON.stringify(verified));
check(
  "verified address is normalized",
  verified.street1 === TO.street1.toUpperCase() && verified.zip.startsWith(`${TO.zip}-`),
  JSON.stringify(verified),
);
check("verification has coordinates", typeof delivery.details?.latitude === "number", JSON.stringify(delivery));
const withVerify = await client.Address.create({ ...FROM, verify: true });
check("address create with verify", withVerify.verifications?.delivery?.success === true, JSON.stringify(withVerify));
const both = await client.Address.createAndVerify({ ...FROM });
check("createAndVerify", both.verifications?.zip4?.success === true && both.city === FROM.city.toUpperCase(), JSON.stringify(both));
const soft = await client.Address.create({ street1: "Main St", city: "Springfield", state: "IL", zip: "62701", country: "US", verify: true });
check("failed non-strict verify is not an error", soft.verifications?.delivery?.success === false, JSON.stringify(soft));
const failure = await refused(
  "strict verify failure is an InvalidRequestError",
  422,
  () => client.Address.create({ street1: "Main St", city: "Springfield", state: "IL", zip: "62701", verify_strict: true }),
  "ADDRESS.VERIFY.FAILURE",
);
check("strict verify failure names its field errors", (failure.errors || []).some((e) => e.field === "street1"), JSON.stringify(failure.errors));
await refused("unknown address is a NotFoundError", 404, () => client.Address.retrieve(`adr_${"0".repeat(32)}`), "NOT_FOUND");

// --- a shipment, bought with its lowest rate, and its labels -----------------------------------

const shipment = await client.Shipment.create({
  to_address: { id: verified.id },
  from_address: { id: withVerify.id },
  parcel: { length: 10, width: 8, height: 4, weight: 16 },
  reference: `node-${run}`,
});
check("shipment created", shipment.id.startsWith("shp_") && shipment.rates.length >= 2, JSON.stringify(shipment).slice(0, 400));
check("shipment keeps the addresses given by id", shipment.to_address.id === verified.id, JSON.stringify(shipment.to_address));
const lowest = shipment.lowestRate();
check(
  "lowestRate is the cheapest rate",
  parseFloat(lowest.rate) === minRate(shipment.rates) && lowest.shipment_id === shipment.id,
  JSON.stringify(lowest),
);
const carriers = [...new Set(shipment.rates.map((r) => r.carrier))].sort();
const other = carriers.find((c) => c !== lowest.carrier) || lowest.carrier;
check("lowestRate filters by carrier", shipment.lowestRate([other]).carrier === other, JSON.stringify(carriers));
const bought = await client.Shipment.buy(shipment.id, lowest);
check("shipment bought", bought.selected_rate.id === lowest.id && Boolean(bought.tracking_code), JSON.stringify(bought).slice(0, 400));
const postage = bought.fees.filter((f) => f.type === "PostageFee");
check("postage fee is the rate", postage.length === 1 && parseFloat(postage[0].amount) === parseFloat(lowest.rate), JSON.stringify(bought.fees));
check("bought shipment has a tracker", bought.tracker?.tracking_code === bought.tracking_code, JSON.stringify(bought.tracker));
const label = bought.postage_label;
const png = await fetchFile(label.label_url);
check(
  "label URL serves a PNG",
  png.bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) && png.type.startsWith("image/png"),
  png.bytes.subarray(0, 16).toString("hex"),
);
const [width, height] = [png.bytes.readUInt32BE(16), png.bytes.readUInt32BE(20)];
const inches = label.label_size.split("x").map(Number);
check("PNG has the label size's shape", width * inches[1] === height * inches[0], `${width}x${height} for ${label.label_size}`);
const asPdf = await client.Shipment.convertLabelFormat(shipment.id, "PDF");
const pdf = await fetchFile(asPdf.postage_label.label_pdf_url);
check("label converted to PDF", pdf.bytes.subarray(0, 5).toString() === "%PDF-" && pdf.type.startsWith("application/pdf"), pdf.bytes.subarray(0, 16).toString());
check("PDF conversion keeps the PNG", asPdf.postage_label.label_url === label.label_url, JSON.stringify(asPdf.postage_label));
const asZpl = await client.Shipment.convertLabelFormat(shipment.id, "ZPL");
const zpl = (await fetchFile(asZpl.postage_label.label_zpl_url)).bytes.toString();
check("label converted to ZPL", zpl.startsWith("^XA") && zpl.includes(bought.tracking_code), zpl.slice(0, 60));
await refused("buying twice is an InvalidRequestError", 422, () => client.Shipment.buy(shipment.id, lowest));
await refused("unknown shipment is a NotFoundError", 404, () => client.Shipment.retrieve(`shp_${"0".repeat(32)}`), "NOT_FOUND");
check(
  "404 and 422 are distinct subclasses of one ApiError",
  errorClasses[404] !== errorClasses[422] &&
    Object.getPrototypeOf(errorClasses[404]) === Object.getPrototypeOf(errorClasses[422]) &&
    errorClasses[404].prototype instanceof Error,
);

// --- trackers ----------------------------------------------------------------------------------

const deliveredTracker = await client.Tracker.create({ tracking_code: "EZ4000000004", carrier: "USPS" });
check("tracker EZ4000000004", deliveredTracker.id.startsWith("trk_") && deliveredTracker.status === "delivered", JSON.stringify(deliveredTracker).slice(0, 400));
const details = deliveredTracker.tracking_details || [];
check("delivered tracker has its scans", details.length > 0 && details[details.length - 1].status === "delivered", JSON.stringify(details).slice(0, 400));
const own = await client.Tracker.create({ tracking_code: bought.tracking_code, carrier: lowest.carrier });
check("tracker of the bought code is the shipment's", own.id === bought.tracker.id && own.shipment_id === shipment.id, JSON.stringify(own));
check("tracker retrieve", (await client.Tracker.retrieve(own.id)).tracking_code === bought.tracking_code);
let page = await client.Tracker.all({ page_size: 2 });
const walked = page.trackers.map((t) => t.id);
let pages = 1;
for (; pages < 100; pages++) {
  try {
    page = await client.Tracker.getNextPage(page, 2);
  } catch (e) {
    if (e?.message === "There are no more pages to retrieve.") break; // EndOfPaginationError
    throw e;
  }
  walked.push(...page.trackers.map((t) => t.id));
}
check("tracker paging walks at least two pages", pages >= 2, `${pages} page(s)`);
check("tracker pages do not repeat", walked.length === new Set(walked).size, JSON.stringify(walked));
const onePage = await client.Tracker.all({ page_size: 100 });
if (!onePage.has_more) {
  check("tracker pages add up to the whole list", JSON.stringify(walked) === JSON.stringify(onePage.trackers.map((t) => t.id)), `${walked.length} / ${onePage.trackers.length}`);
}
check("tracker list holds both new trackers", walked.includes(deliveredTracker.id) && walked.includes(own.id), JSON.stringify(walked));
const byCode = await client.Tracker.all({ tracking_code: "EZ4000000004", page_size: 5 });
check(
  "tracker list filters by code",
  byCode.trackers.length > 0 && byCode.trackers.every((t) => t.tracking_code === "EZ4000000004"),
  JSON.stringify(byCode).slice(0, 300),
);

// --- a refund ----------------------------------------------------------------------------------

const refunds = await client.Refund.create({ carrier: lowest.carrier, tracking_codes: [bought.tracking_code] });
check(
  "refund requested",
  refunds.length === 1 && refunds[0].tracking_code === bought.tracking_code && ["submitted", "refunded"].includes(refunds[0].status),
  JSON.stringify(refunds),
);
check("shipment shows its refund", (await client.Shipment.retrieve(shipment.id)).refund_status === refunds[0].status);
check("refund retrieve", (await client.Refund.retrieve(refunds[0].id)).shipment_id === shipment.id);
await refused("refunding twice is an InvalidRequestError", 422, () => client.Shipment.refund(shipment.id));

// --- a batch of two shipments: created, bought, labelled, scan form ------------------------------

// One member is given whole, naming its carrier and service, as EasyPost's own SDK tests make
// batches (the dearest service of the cheapest carrier, so that the lowest rate would not pass);
// the other is an existing shipment given by id, as the batch guide makes them.
const PARCEL = { length: 12, width: 12, height: 6, weight: 42 };
const existing = await client.Shipment.create({
  to_address: { ...TO },
  from_address: { id: withVerify.id },
  parcel: PARCEL,
  reference: `node-${run}-existing`,
});
const carrier = existing.lowestRate().carrier;
const dearest = existing.rates
  .filter((r) => r.carrier === carrier)
  .reduce((a, b) => (parseFloat(b.rate) > parseFloat(a.rate) ? b : a));
const named = {
  to_address: { ...TO },
  from_address: { id: withVerify.id },
  parcel: PARCEL,
  reference: `node-${run}-named`,
  carrier: dearest.carrier,
  service: dearest.service,
};
let batch = await client.Batch.create({ shipments: [named, { id: existing.id }], reference: `node-${run}` });
check("batch created", batch.id.startsWith("batch_") && batch.num_shipments === 2, JSON.stringify(batch).slice(0, 400));
const batchId = batch.id;
const readBatch = () => client.Batch.retrieve(batchId);
batch = await waitFor("batch state created", readBatch, (b) => b.state === "created");
check("batch shipments created", batch.status.created === 2, JSON.stringify(batch.status));
const byReference = Object.fromEntries(batch.shipments.map((s) => [s.reference, s.id]));
check(
  "batch lists both shipments",
  byReference[existing.reference] === existing.id && Boolean(byReference[named.reference]),
  JSON.stringify(batch.shipments),
);
const unbought = await client.Shipment.retrieve(byReference[named.reference]);
check(
  "a shipment created in a batch waits for the batch to be bought",
  unbought.selected_rate === null && unbought.tracking_code === null,
  JSON.stringify(unbought.selected_rate),
);
await client.Batch.buy(batchId);
batch = await waitFor("batch state purchased", readBatch, (b) => b.state === "purchased");
const codes = batch.shipments.map((s) => s.tracking_code);
check("batch shipments purchased", batch.status.postage_purchased === 2 && codes.every(Boolean), JSON.stringify(batch.shipments));
const boughtNamed = await client.Shipment.retrieve(byReference[named.reference]);
check(
  "batch bought the named carrier and service",
  boughtNamed.selected_rate.carrier === dearest.carrier &&
    boughtNamed.selected_rate.service === dearest.service &&
    boughtNamed.batch_id === batchId,
  JSON.stringify(boughtNamed.selected_rate),
);
const boughtExisting = await client.Shipment.retrieve(existing.id);
check(
  "batch bought the existing shipment with one of its rates",
  existing.rates.some((r) => r.id === boughtExisting.selected_rate.id) && codes.includes(boughtExisting.tracking_code),
  JSON.stringify(boughtExisting.selected_rate),
);
// The SDK's default format is "pdf", in lower case.
await client.Batch.generateLabel(batchId);
batch = await waitFor("batch state label_generated", readBatch, (b) => b.state === "label_generated" && Boolean(b.label_url));
const merged = await fetchFile(batch.label_url);
check("batch label is one PDF", merged.bytes.subarray(0, 5).toString() === "%PDF-" && merged.type.startsWith("application/pdf"), merged.bytes.subarray(0, 16).toString());
check("batch PDF holds both labels", codes.every((c) => merged.bytes.includes(c)), JSON.stringify(codes));
const withForm = await client.Batch.createScanForm(batchId);
check("scan form requested", Boolean(withForm.scan_form?.id?.startsWith("sf_")), JSON.stringify(withForm.scan_form));
const form = await waitFor("scan form created", () => client.ScanForm.retrieve(withForm.scan_form.id), (f) => f.status === "created");
check(
  "scan form lists the batch's codes",
  JSON.stringify([...form.tracking_codes].sort()) === JSON.stringify([...codes].sort()) && form.batch_id === batchId,
  JSON.stringify(form),
);
const formPdf = await fetchFile(form.form_url);
check("scan form is a PDF", formPdf.bytes.subarray(0, 5).toString() === "%PDF-", formPdf.bytes.subarray(0, 16).toString());

// --- the webhook: signed events, then update, list, delete --------------------------------------

// Every POST must carry a signature the SDK accepts; the batch's own events must have come.
function signedEvents() {
  return received.map(({ headers, body }) => {
    try {
      return client.Utils.validateWebhook(body, headers, secret);
    } catch (e) {
      return { invalid: e.message, body: body.toString().slice(0, 300) };
    }
  });
}
const events = await waitFor("signed batch events arrive", async () => signedEvents(), (es) => {
  const kinds = new Set(es.filter((e) => e.result?.id === batchId).map((e) => e.description));
  return kinds.has("batch.created") && kinds.has("batch.updated");
});
const invalid = events.filter((e) => e.invalid);
check("every webhook POST passes validateWebhook", invalid.length === 0, JSON.stringify(invalid[0]));
check("events name the receiver", events.every((e) => [...e.pending_urls, ...e.completed_urls].includes(hookUrl)), JSON.stringify(events[0]).slice(0, 300));
const updated = await client.Webhook.update(hook.id, { webhook_secret: `${secret}-2` });
check("webhook updated", updated.id === hook.id && updated.disabled_at === null, JSON.stringify(updated));
const listed = await client.Webhook.all();
check("webhook listed", listed.webhooks.some((w) => w.id === hook.id), JSON.stringify(listed).slice(0, 300));
await client.Webhook.delete(hook.id);
await refused("deleted webhook is a NotFoundError", 404, () => client.Webhook.retrieve(hook.id));
// The sandbox's webhook client keeps its connection alive (and may still be sending): drop it too,
// or the listener keeps the process from ending.
receiver.close();
receiver.closeAllConnections();
console.log("PASSED node");
