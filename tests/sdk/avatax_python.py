#!/usr/bin/env python3
"""Smoke test: the official AvaTax Python SDK (PyPI `avalara`) against `opsdeck sandbox`.

Usage: avatax_python.py [AVATAX_BASE_URL]
  The URL (e.g. http://127.0.0.1:7703) comes from argv[1], else $OPSDECK_AVATAX_URL, else
  http://127.0.0.1:7703. The credentials are the sandbox's (account 1100000001, license key
  SANDBOXLICENSEKEY) unless $AVATAX_ACCOUNT_ID / $AVATAX_LICENSE_KEY say otherwise.

Checks ping (good and bad credentials), create (a quote and an invoice), get, commit, void,
list with $filter, the error of an illegal transition, refund and audit. Prints one line per
check and exits 1 with the reason at the first failure. Transaction codes are unique per run,
so nothing depends on the seeded data.
"""

import datetime
import os
import sys
import uuid

try:
    from avalara import AvataxClient
except ImportError as e:  # the runner installs it; a direct run may not have it
    print(f"FAIL python: cannot import the avalara SDK: {e}", file=sys.stderr)
    sys.exit(1)


class CheckFailed(Exception):
    pass


def expect(cond, what):
    if not cond:
        raise CheckFailed(what)


def ok(name, detail=""):
    print(f"ok   [python] {name}" + (f" ({detail})" if detail else ""), flush=True)


def body(response, status, what):
    expect(response.status_code == status,
           f"{what}: expected HTTP {status}, got {response.status_code}: {response.text[:300]}")
    return response.json()


def main():
    url = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("OPSDECK_AVATAX_URL", "http://127.0.0.1:7703")
    account = os.environ.get("AVATAX_ACCOUNT_ID", "1100000001")
    key = os.environ.get("AVATAX_LICENSE_KEY", "SANDBOXLICENSEKEY")
    run = uuid.uuid4().hex[:8]
    today = datetime.date.today().isoformat()

    client = AvataxClient("opsdeck-smoke", "1.0", "box", url).add_credentials(account, key)
    print(f"avalara (python) against {url}", flush=True)

    ping = body(client.ping(), 200, "ping")
    expect(ping.get("authenticated") is True, f"ping: expected authenticated true, got {ping!r}")
    ok("ping", ping.get("authenticationType", ""))

    stranger = AvataxClient("opsdeck-smoke", "1.0", "box", url).add_credentials(account, "WRONG")
    bad = body(stranger.ping(), 200, "ping with a wrong key")
    expect(bad.get("authenticated") is False, f"ping with a wrong key: expected authenticated false, got {bad!r}")
    refused = stranger.list_transactions_by_company("DEFAULT")
    expect(refused.status_code == 401 and refused.json()["error"]["code"] == "AuthenticationException",
           f"wrong key: expected 401 AuthenticationException, got {refused.status_code} {refused.text[:200]}")
    ok("wrong key", "ping says unauthenticated, other calls 401")

    def model(code, doc_type, commit=False):
        return {
            "type": doc_type, "companyCode": "DEFAULT", "code": code, "date": today, "customerCode": "ABC",
            "purchaseOrderNo": f"PO-{run}",
            "addresses": {"SingleLocation": {"line1": "123 Main Street", "city": "Irvine", "region": "CA",
                                             "country": "US", "postalCode": "92615"}},
            "lines": [{"number": "1", "quantity": 1, "amount": 100, "taxCode": "PS081282",
                       "itemCode": "Y0001", "description": "Yarn"}],
            "commit": commit, "currencyCode": "USD", "description": "Yarn",
        }

    quote = body(client.create_transaction(model(f"py-quote-{run}", "SalesOrder")), 201, "create a quote")
    expect(quote["status"] == "Temporary" and quote["totalTax"] == 7.75, f"quote: got {quote['status']} {quote['totalTax']}")
    missing = client.get_transaction_by_code("DEFAULT", f"py-quote-{run}")
    expect(missing.status_code == 404, f"a quote is not stored: expected 404, got {missing.status_code}")
    ok("create a quote", "7.75 tax, not stored")

    code = f"py-{run}"
    created = body(client.create_transaction(model(code, "SalesInvoice")), 201, "create an invoice")
    expect(created["status"] == "Saved", f"create: expected Saved, got {created['status']}")
    expect(len(created["lines"][0]["details"]) == 4, "create: expected 4 jurisdiction details")
    ok("create an invoice", f"id {created['id']}, tax {created['totalTax']}")

    got = body(client.get_transaction_by_code("DEFAULT", code, {"$include": "Lines"}), 200, "get")
    expect(got["id"] == created["id"], f"get: expected id {created['id']}, got {got['id']}")
    ok("get by code")

    committed = body(client.commit_transaction("DEFAULT", code, {"commit": True}), 200, "commit")
    expect(committed["status"] == "Committed", f"commit: expected Committed, got {committed['status']}")
    ok("commit")

    listed = body(client.list_transactions_by_company(
        "DEFAULT", {"$filter": f"code eq '{code}' and status eq Committed", "$top": 5}), 200, "list")
    expect(listed["@recordsetCount"] == 1 and listed["value"][0]["code"] == code, f"list: got {listed!r}"[:300])
    ok("list with $filter", f"{listed['@recordsetCount']} found")

    refund = body(client.refund_transaction("DEFAULT", code, {
        "refundTransactionCode": f"{code}-r", "refundType": "Full", "refundDate": today,
        "referenceCode": "smoke test"}), 201, "refund")  # a new document: 201 Created, as production answers
    expect(refund["type"] == "ReturnInvoice" and refund["totalTax"] == -7.75, f"refund: got {refund['type']} {refund['totalTax']}")
    ok("refund", f"{refund['totalAmount']} / {refund['totalTax']}")

    voided = body(client.void_transaction("DEFAULT", code, {"code": "DocVoided"}), 200, "void")
    expect(voided["status"] == "Cancelled", f"void: expected Cancelled, got {voided['status']}")
    ok("void")

    again = client.commit_transaction("DEFAULT", code, {"commit": True})
    error = again.json().get("error", {})
    expect(again.status_code == 400 and error.get("code") == "GetTaxError" and error.get("details"),
           f"commit a voided document: expected 400 GetTaxError, got {again.status_code} {again.text[:200]}")
    ok("commit a voided document is refused", error.get("code"))

    audit = body(client.audit_transaction("DEFAULT", code), 200, "audit")
    expect(audit["original"]["request"]["code"] == code, "audit: the original request is not there")
    ok("audit")

    print("python: all checks passed", flush=True)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except CheckFailed as e:
        print(f"FAIL [python] {e}", file=sys.stderr, flush=True)
        sys.exit(1)
    except Exception as e:  # a crash inside the SDK is a failure too
        import traceback
        traceback.print_exc()
        print(f"FAIL [python] unexpected {type(e).__name__}: {e}", file=sys.stderr, flush=True)
        sys.exit(1)
