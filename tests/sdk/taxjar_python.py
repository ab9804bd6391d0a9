#!/usr/bin/env python3
"""Smoke test: the official TaxJar Python SDK (PyPI `taxjar` 2.x) against `opsdeck sandbox`.

Usage: taxjar_python.py [TAXJAR_BASE_URL]   (default $OPSDECK_TAXJAR_URL, else http://127.0.0.1:7704)
Calculates the docs' example, then creates, lists, updates and deletes an order. Prints one line
per check and exits 1 at the first failure. The order id is unique per run.
"""

import os
import sys
import uuid

try:
    import taxjar
except ImportError as e:
    print(f"FAIL python: cannot import the taxjar SDK: {e}", file=sys.stderr)
    sys.exit(1)

url = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("OPSDECK_TAXJAR_URL", "http://127.0.0.1:7704")
client = taxjar.Client(api_key=os.environ.get("TAXJAR_SANDBOX_TOKEN", "sandbox-taxjar-token"), api_url=url.rstrip("/"))


def check(name, condition, detail=""):
    if not condition:
        print(f"FAIL python: {name} {detail}", file=sys.stderr)
        sys.exit(1)
    print(f"ok python: {name}")


tax = client.tax_for_order({
    "from_country": "US", "from_zip": "92093", "from_state": "CA", "to_country": "US", "to_zip": "90002",
    "to_state": "CA", "amount": 15, "shipping": 1.5,
    "nexus_addresses": [{"id": "Main", "country": "US", "zip": "92093", "state": "CA"}],
    "line_items": [{"id": "1", "quantity": 1, "product_tax_code": "20010", "unit_price": 15, "discount": 0}],
})
check("calculate", float(tax.amount_to_collect) == 1.35 and tax.has_nexus is True, repr(tax))

order_id = "py-" + uuid.uuid4().hex[:10]
order = client.create_order({
    "transaction_id": order_id, "transaction_date": "2015/05/14", "to_country": "US", "to_zip": "90002",
    "to_state": "CA", "amount": 16.5, "shipping": 1.5, "sales_tax": 1.35,
    "line_items": [{"id": "1", "quantity": 1, "unit_price": 15, "sales_tax": 1.35}],
})
check("order create", order.transaction_id == order_id, repr(order))
ids = client.list_orders({"from_transaction_date": "2015/05/01", "to_transaction_date": "2015/05/31"})
check("order list", order_id in ids, repr(ids))
updated = client.update_order(order_id, {"transaction_id": order_id, "amount": 20, "shipping": 5})
check("order update", float(updated.amount) == 20.0, repr(updated))
deleted = client.delete_order(order_id)
check("order delete", deleted.transaction_id == order_id, repr(deleted))
try:
    client.show_order(order_id)
    check("deleted order is gone", False)
except taxjar.exceptions.TaxJarResponseError as e:
    check("deleted order is gone", "404" in str(e) or "Not Found" in str(e), str(e))
print("PASSED python")
