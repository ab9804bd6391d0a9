#!/usr/bin/env python3
"""Smoke test: the official EasyPost Python SDK (PyPI `easypost` 10.x) against `opsdeck sandbox`.

Usage: easypost_python.py [BASE_URL]
       (default $OPSDECK_EASYPOST_URL, else http://127.0.0.1:7708/v2 -- the URL the sandbox prints,
       with EasyPost's /v2, which is appended when missing; it is the SDK's api_base)

Creates and verifies addresses (a strict verify of an address without a house number must raise
InvalidRequestError with ADDRESS.VERIFY.FAILURE); creates a shipment, buys its lowest rate (the
SDK's `lowest_rate`), fetches the PNG label and its PDF and ZPL conversions over HTTP; buying
twice and a 404 raise the SDK's error classes; tracks EZ4000000004 and the bought code, and walks
the tracker list page by page with `get_next_page`; refunds the shipment; creates a batch of two
shipments (one given whole with its carrier and service, one by id) and waits (bounded) for it to
be created, purchased and labelled (PDF), then makes its scan form; a webhook receives the batch's
events on a loopback listener, signed so that the SDK's `validate_webhook` accepts them, then is
updated, listed and deleted; then the routes shipping code also uses: a shipment with customs
(a `cstinfo_` record), its SmartRates and lowest SmartRate, a rate by id, buying (the destination
comes back verified), a standalone scan form, carrier accounts, an order of two shipments rated
and bought, and a pickup created, bought and canceled. References carry a per-run id. Prints one line per check and exits 1
at the first failure. Every wait is bounded.
"""

import http.server
import os
import sys
import threading
import time
import urllib.request
import uuid

try:
    import easypost
    from easypost.errors import EndOfPaginationError, InvalidRequestError, NotFoundError
    from easypost.util import validate_webhook
except ImportError as e:
    print(f"FAIL python: cannot import the easypost SDK: {e}", file=sys.stderr)
    sys.exit(1)

api_base = (sys.argv[1] if len(sys.argv) > 1 else os.environ.get("OPSDECK_EASYPOST_URL", "http://127.0.0.1:7708/v2")).rstrip("/")
if not api_base.endswith("/v2"):
    api_base += "/v2"
key = os.environ.get("EASYPOST_SANDBOX_KEY", "EZTKsandbox")
WAIT_SECONDS = float(os.environ.get("EASYPOST_WAIT", "30"))
run = uuid.uuid4().hex[:10]

client = easypost.EasyPostClient(key, api_base=api_base)


def check(name, condition, detail=""):
    if not condition:
        print(f"FAIL python: {name} {detail}", file=sys.stderr)
        sys.exit(1)
    print(f"ok python: {name}")


def raises(name, error_class, call, status=None, code=None):
    """Runs `call`, which must raise `error_class` (with `status` and `code` when given)."""
    try:
        answer = call()
    except error_class as e:
        detail = f"got {type(e).__name__} {e.http_status} {e.code}: {e.message}"
        check(name, (status is None or e.http_status == status) and (code is None or e.code == code), detail)
        return e
    except Exception as e:  # noqa: BLE001 - any other class is the failure being reported
        check(name, False, f"expected {error_class.__name__}, got {type(e).__name__}: {e}")
    else:
        check(name, False, f"expected {error_class.__name__}, got success: {answer!r}"[:400])
    return None


def fetch(url):
    """The bytes and content type of a label or form file."""
    with urllib.request.urlopen(url, timeout=10) as response:
        return response.read(), response.headers.get("Content-Type", "")


def wait_for(what, read, done):
    """Polls `read()` until `done(value)`, at most WAIT_SECONDS; the last value read."""
    deadline = time.monotonic() + WAIT_SECONDS
    value = read()
    while not done(value) and time.monotonic() < deadline:
        time.sleep(0.5)
        value = read()
    check(f"{what} within {WAIT_SECONDS:g}s", done(value), repr(value)[:400])
    return value


# --- a webhook receiver on loopback ----------------------------------------------------------

received = []  # (headers, raw body)
received_lock = threading.Lock()


class Receiver(http.server.BaseHTTPRequestHandler):
    def do_POST(self):  # noqa: N802 - the http.server hook name
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        with received_lock:
            received.append((self.headers, body))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


receiver = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
threading.Thread(target=receiver.serve_forever, daemon=True).start()
hook_url = f"http://127.0.0.1:{receiver.server_address[1]}/easypost/{run}"
secret = f"s3cret-{run}"
hook = client.webhook.create(url=hook_url, webhook_secret=secret)
check("webhook created", hook.id.startswith("hook_") and hook.url == hook_url, repr(hook))

# --- addresses -------------------------------------------------------------------------------

TO = {"name": "Dr. Steve Brule", "street1": "179 N Harbor Dr", "city": "Redondo Beach", "state": "CA", "zip": "90277",
      "country": "US", "email": "steve@example.com"}
FROM = {"name": "EasyPost", "street1": "417 Montgomery St", "street2": "5th Floor", "city": "San Francisco",
        "state": "CA", "zip": "94104", "country": "US", "phone": "4153334444"}

plain = client.address.create(**TO)
check("address created", plain.id.startswith("adr_") and plain.street1 == TO["street1"], repr(plain))
verified = client.address.verify(plain.id)
delivery = verified.verifications.delivery
check("address verify", verified.id != plain.id and delivery.success is True, repr(verified))
check("verified address is normalized", verified.street1 == TO["street1"].upper() and verified.zip.startswith(TO["zip"] + "-"),
      repr(verified))
check("verification has coordinates", isinstance(delivery.details.latitude, float), repr(delivery))
with_verify = client.address.create(verify=True, **FROM)
check("address create with verify", with_verify.verifications.delivery.success is True, repr(with_verify))
both = client.address.create_and_verify(**FROM)
check("create_and_verify", both.verifications.zip4.success is True and both.city == FROM["city"].upper(), repr(both))
soft = client.address.create(verify=True, street1="Main St", city="Springfield", state="IL", zip="62701", country="US")
check("failed non-strict verify is not an error", soft.verifications.delivery.success is False, repr(soft))
failure = raises(
    "strict verify failure raises InvalidRequestError",
    InvalidRequestError,
    lambda: client.address.create(verify_strict=True, street1="Main St", city="Springfield", state="IL", zip="62701"),
    status=422,
    code="ADDRESS.VERIFY.FAILURE",
)
check("strict verify failure names its field errors", any(e.get("field") == "street1" for e in failure.errors or []),
      repr(failure.errors))
raises("unknown address raises NotFoundError", NotFoundError, lambda: client.address.retrieve("adr_" + "0" * 32),
       status=404, code="NOT_FOUND")

# --- a shipment, bought with its lowest rate, and its labels ---------------------------------

shipment = client.shipment.create(to_address=verified, from_address=with_verify, reference=f"py-{run}",
                                  parcel={"length": 10, "width": 8, "height": 4, "weight": 15.4})
check("shipment created", shipment.id.startswith("shp_") and len(shipment.rates) >= 2, repr(shipment)[:400])
check("shipment keeps the addresses given by id", shipment.to_address.id == verified.id, repr(shipment.to_address))
lowest = shipment.lowest_rate()
cheapest = min(float(r.rate) for r in shipment.rates)
check("lowest_rate is the cheapest rate", float(lowest.rate) == cheapest and lowest.shipment_id == shipment.id, repr(lowest))
carriers = sorted({r.carrier for r in shipment.rates})
other = next((c for c in carriers if c != lowest.carrier), lowest.carrier)
check("lowest_rate filters by carrier", shipment.lowest_rate(carriers=[other]).carrier == other, repr(carriers))
bought = client.shipment.buy(shipment.id, rate=lowest)
check("shipment bought", bought.selected_rate.id == lowest.id and bool(bought.tracking_code), repr(bought)[:400])
postage = [f for f in bought.fees if f.type == "PostageFee"]
check("postage fee is the rate", len(postage) == 1 and float(postage[0].amount) == float(lowest.rate), repr(bought.fees))
check("bought shipment has a tracker", bought.tracker.tracking_code == bought.tracking_code, repr(bought.tracker))
label = bought.postage_label
png, png_type = fetch(label.label_url)
check("label URL serves a PNG", png.startswith(b"\x89PNG\r\n\x1a\n") and png_type.startswith("image/png"), repr(png[:16]))
width, height = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
inches = [int(x) for x in label.label_size.split("x")]
check("PNG has the label size's shape", width * inches[1] == height * inches[0], f"{width}x{height} for {label.label_size}")
as_pdf = client.shipment.label(shipment.id, file_format="PDF")
pdf, pdf_type = fetch(as_pdf.postage_label.label_pdf_url)
check("label converted to PDF", pdf.startswith(b"%PDF-") and pdf_type.startswith("application/pdf"), repr(pdf[:16]))
check("PDF conversion keeps the PNG", as_pdf.postage_label.label_url == label.label_url, repr(as_pdf.postage_label))
as_zpl = client.shipment.label(shipment.id, file_format="ZPL")
zpl, _ = fetch(as_zpl.postage_label.label_zpl_url)
check("label converted to ZPL", zpl.startswith(b"^XA") and bought.tracking_code.encode() in zpl, repr(zpl[:60]))
raises("buying twice raises InvalidRequestError", InvalidRequestError,
       lambda: client.shipment.buy(shipment.id, rate=lowest), status=422)
raises("unknown shipment raises NotFoundError", NotFoundError, lambda: client.shipment.retrieve("shp_" + "0" * 32),
       status=404, code="NOT_FOUND")

# --- trackers --------------------------------------------------------------------------------

delivered = client.tracker.create(tracking_code="EZ4000000004", carrier="USPS")
check("tracker EZ4000000004", delivered.id.startswith("trk_") and delivered.status == "delivered", repr(delivered)[:400])
check("delivered tracker has its scans", delivered.tracking_details and delivered.tracking_details[-1].status == "delivered",
      repr(delivered.tracking_details)[:400])
own = client.tracker.create(tracking_code=bought.tracking_code, carrier=lowest.carrier)
check("tracker of the bought code is the shipment's", own.id == bought.tracker.id and own.shipment_id == shipment.id, repr(own))
check("tracker retrieve", client.tracker.retrieve(own.id).tracking_code == bought.tracking_code)
page = client.tracker.all(page_size=2)
walked = [t.id for t in page.trackers]
pages = 1
while pages < 100:
    try:
        page = client.tracker.get_next_page(page, page_size=2)
    except EndOfPaginationError:
        break
    walked.extend(t.id for t in page.trackers)
    pages += 1
check("tracker paging walks at least two pages", pages >= 2, f"{pages} page(s)")
check("tracker pages do not repeat", len(walked) == len(set(walked)), repr(walked))
one_page = client.tracker.all(page_size=100)
if not one_page.has_more:
    check("tracker pages add up to the whole list", walked == [t.id for t in one_page.trackers], f"{walked} / {len(one_page.trackers)}")
check("tracker list holds both new trackers", {delivered.id, own.id} <= set(walked), repr(walked))
by_code = client.tracker.all(tracking_code="EZ4000000004", page_size=5)
check("tracker list filters by code", by_code.trackers and all(t.tracking_code == "EZ4000000004" for t in by_code.trackers),
      repr(by_code)[:300])

# --- a refund ---------------------------------------------------------------------------------

refunds = client.refund.create(carrier=lowest.carrier, tracking_codes=[bought.tracking_code])
check("refund requested", len(refunds) == 1 and refunds[0].tracking_code == bought.tracking_code
      and refunds[0].status in ("submitted", "refunded"), repr(refunds))
check("shipment shows its refund", client.shipment.retrieve(shipment.id).refund_status == refunds[0].status)
check("refund retrieve", client.refund.retrieve(refunds[0].id).shipment_id == shipment.id)
raises("refunding twice raises InvalidRequestError", InvalidRequestError, lambda: client.shipment.refund(shipment.id), status=422)

# --- a batch of two shipments: created, bought, labelled, scan form ---------------------------

# One member is given whole, naming its carrier and service, as EasyPost's own SDK tests make
# batches (the dearest service of the cheapest carrier, so that the lowest rate would not pass); the
# other is an existing shipment given by id, as the batch guide makes them.
PARCEL = {"length": 12, "width": 12, "height": 6, "weight": 42.0}
existing = client.shipment.create(to_address=TO, from_address=with_verify, parcel=PARCEL, reference=f"py-{run}-existing")
carrier = existing.lowest_rate().carrier
dearest = max((r for r in existing.rates if r.carrier == carrier), key=lambda r: float(r.rate))
named = {"to_address": TO, "from_address": with_verify, "parcel": PARCEL, "reference": f"py-{run}-named",
         "carrier": dearest.carrier, "service": dearest.service}
batch = client.batch.create(shipments=[named, existing], reference=f"py-{run}")
check("batch created", batch.id.startswith("batch_") and batch.num_shipments == 2, repr(batch)[:400])
batch = wait_for("batch state created", lambda: client.batch.retrieve(batch.id), lambda b: b.state == "created")
check("batch shipments created", batch.status.created == 2, repr(batch.status))
by_reference = {s.reference: s.id for s in batch.shipments}
check("batch lists both shipments", by_reference.get(existing.reference) == existing.id and named["reference"] in by_reference,
      repr(batch.shipments))
unbought = client.shipment.retrieve(by_reference[named["reference"]])
check("a shipment created in a batch waits for the batch to be bought", unbought.selected_rate is None
      and unbought.tracking_code is None, repr(unbought.selected_rate))
client.batch.buy(batch.id)
batch = wait_for("batch state purchased", lambda: client.batch.retrieve(batch.id), lambda b: b.state == "purchased")
codes = [s.tracking_code for s in batch.shipments]
check("batch shipments purchased", batch.status.postage_purchased == 2 and all(codes), repr(batch.shipments))
bought_named = client.shipment.retrieve(by_reference[named["reference"]])
check("batch bought the named carrier and service",
      (bought_named.selected_rate.carrier, bought_named.selected_rate.service) == (dearest.carrier, dearest.service)
      and bought_named.batch_id == batch.id, repr(bought_named.selected_rate))
bought_existing = client.shipment.retrieve(existing.id)
check("batch bought the existing shipment with one of its rates",
      bought_existing.selected_rate.id in {r.id for r in existing.rates} and bought_existing.tracking_code in codes,
      repr(bought_existing.selected_rate))
client.batch.label(batch.id, file_format="PDF")
batch = wait_for("batch state label_generated", lambda: client.batch.retrieve(batch.id),
                 lambda b: b.state == "label_generated" and b.label_url)
merged, merged_type = fetch(batch.label_url)
check("batch label is one PDF", merged.startswith(b"%PDF-") and merged_type.startswith("application/pdf"), repr(merged[:16]))
check("batch PDF holds both labels", all(c.encode() in merged for c in codes), repr(codes))
with_form = client.batch.create_scan_form(batch.id)
check("scan form requested", with_form.scan_form.id.startswith("sf_"), repr(with_form.scan_form))
form = wait_for("scan form created", lambda: client.scan_form.retrieve(with_form.scan_form.id), lambda f: f.status == "created")
check("scan form lists the batch's codes", sorted(form.tracking_codes) == sorted(codes) and form.batch_id == batch.id, repr(form))
form_pdf, _ = fetch(form.form_url)
check("scan form is a PDF", form_pdf.startswith(b"%PDF-"), repr(form_pdf[:16]))


# --- the webhook: signed events, then update, list, delete -----------------------------------


def signed_events():
    """Every POST received, as `validate_webhook` reads it (or why it refused it)."""
    with received_lock:
        got = list(received)
    events = []
    for headers, body in got:
        try:
            events.append(validate_webhook(body, headers, secret))
        except Exception as e:  # noqa: BLE001 - reported by the check below
            events.append({"invalid": str(e), "body": body[:300]})
    return events


def has_batch_events(events):
    kinds = {e.get("description") for e in events if e.get("result", {}).get("id") == batch.id}
    return {"batch.created", "batch.updated"} <= kinds


events = wait_for("signed batch events arrive", signed_events, has_batch_events)
invalid = [e for e in events if "invalid" in e]
check("every webhook POST passes validate_webhook", not invalid, repr(invalid[:1]))
check("events name the receiver", all(hook_url in e["pending_urls"] + e["completed_urls"] for e in events), repr(events[0])[:300])
updated = client.webhook.update(hook.id, webhook_secret=f"{secret}-2")
check("webhook updated", updated.id == hook.id and updated.disabled_at is None, repr(updated))
listed = client.webhook.all()
check("webhook listed", hook.id in [w.id for w in listed.webhooks], repr(listed)[:300])
client.webhook.delete(hook.id)
raises("deleted webhook raises NotFoundError", NotFoundError, lambda: client.webhook.retrieve(hook.id), status=404)
# --- what shipping code also uses: SmartRate, customs, scan forms, rates, accounts, orders, pickups

to = {"name": "Dr. Steve Brule", "street1": "179 N Harbor Dr", "city": "Redondo Beach", "state": "CA", "zip": "90277"}
origin = {"name": "EasyPost", "street1": "417 Montgomery St", "city": "San Francisco", "state": "CA", "zip": "94104"}
customs = {"contents_type": "merchandise", "customs_certify": True, "customs_signer": "Steve Brule",
           "customs_items": [{"description": "Sweet shirts", "quantity": 2, "value": 23.25, "weight": 11}]}
abroad = client.shipment.create(to_address=to, from_address=origin, parcel={"weight": 10}, customs_info=customs)
check("customs info is a record", abroad.customs_info.id.startswith("cstinfo_")
      and abroad.customs_info.customs_items[0].id.startswith("cstitem_")
      and abroad.customs_info.customs_items[0].value == "23.25", repr(abroad.customs_info)[:300])
smart = client.shipment.get_smart_rates(abroad.id)
check("smartrates have time in transit", len(smart) == len(abroad.rates)
      and all(r["time_in_transit"]["percentile_90"] >= 1 for r in smart), repr(smart)[:300])
check("lowest smartrate", bool(client.shipment.lowest_smart_rate(abroad.id, 10, "percentile_90")["service"]))
retrieved = client.rate.retrieve(abroad.rates[0].id)
check("rate retrieved by id", retrieved.id == abroad.rates[0].id, repr(retrieved)[:200])
sold = client.shipment.buy(abroad.id, rate=abroad.lowest_rate())
check("buying verifies the destination", sold.to_address.verifications.delivery.success
      and sold.to_address.residential is not None, repr(sold.to_address)[:300])
form = client.scan_form.create(shipments=[sold])
check("standalone scan form", form.id.startswith("sf_") and form.tracking_codes == [sold.tracking_code], repr(form)[:300])
accounts = client.carrier_account.all()
check("carrier accounts listed", accounts and client.carrier_account.retrieve(accounts[0].id).id == accounts[0].id,
      repr(accounts)[:200])
order = client.order.create(to_address=to, from_address=origin,
                            shipments=[{"parcel": {"weight": 10.2}}, {"parcel": {"weight": 17.5}}])
check("order created", order.id.startswith("order_") and len(order.shipments) == 2 and order.rates, repr(order)[:300])
service = client.order.get_rates(order.id).rates[0]
order = client.order.buy(order.id, carrier=service.carrier, service=service.service)
check("order bought", all(s.tracking_code for s in order.shipments), repr(order)[:300])
pickup = client.pickup.create(address=origin, shipment=sold, min_datetime="2030-01-02", max_datetime="2030-01-02",
                              instructions="Front door")
rate = pickup.pickup_rates[0]
pickup = client.pickup.buy(pickup.id, carrier=rate.carrier, service=rate.service)
check("pickup scheduled", pickup.status == "scheduled" and bool(pickup.confirmation), repr(pickup)[:300])
check("pickup canceled", client.pickup.cancel(pickup.id).status == "canceled")

receiver.shutdown()
print("PASSED python")
