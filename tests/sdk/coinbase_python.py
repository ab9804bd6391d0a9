#!/usr/bin/env python3
"""Smoke test: the Python client people use for Coinbase Exchange (PyPI `cbpro` 1.1.4) against
`opsdeck sandbox`.

Usage: coinbase_python.py [COINBASE_BASE_URL]   (default $OPSDECK_COINBASE_URL, else http://127.0.0.1:7705)

Market data through `PublicClient` (products, ticker, stats, book levels 1-3, the paged trades
generator, candles and the 300-bucket limit, currencies, time), then through `AuthenticatedClient`
(the sandbox key, all permissions): accounts, ledger and holds; cancel-all per product; a limit
buy below the market with its hold placed and released; a market buy by funds, its fill and the
exact balance moves; fees, profiles; a deposit from a Coinbase account, a crypto withdrawal held
and listed, a USD to USDC conversion; and the auth errors (bad signature, wrong passphrase,
stale timestamp, a view-only key trading). Prints one line per check and exits 1 at the first
failure. The market moves in the background, so prices are checked for consistency, not values.
"""

import base64
import itertools
import json
import os
import sys
import time
import uuid
from datetime import datetime, timezone
from decimal import Decimal as D

try:
    import cbpro
    import cbpro.cbpro_auth
except ImportError as e:
    print(f"FAIL cbpro: cannot import the cbpro SDK: {e}", file=sys.stderr)
    sys.exit(1)

url = (sys.argv[1] if len(sys.argv) > 1 else os.environ.get("OPSDECK_COINBASE_URL", "http://127.0.0.1:7705")).rstrip("/")
KEY, SECRET, PASSPHRASE = "sandbox-key", "c2FuZGJveC1zZWNyZXQ=", "sandbox-passphrase"
PRODUCT = "BTC-USD"

public = cbpro.PublicClient(api_url=url)
client = cbpro.AuthenticatedClient(KEY, SECRET, PASSPHRASE, api_url=url)


def check(name, condition, detail=""):
    if not condition:
        print(f"FAIL cbpro: {name} {detail}"[:2000], file=sys.stderr)
        sys.exit(1)
    print(f"ok cbpro: {name}")


def short(value):
    return json.dumps(value)[:600]


def not_error(value):
    return not (isinstance(value, dict) and "message" in value)


def raw(method, path, auth, body=None):
    """One request through cbpro's own session and signer, for the status code cbpro hides."""
    r = client.session.request(method, url + path, data=body, auth=auth, timeout=30)
    try:
        return r.status_code, r.json()
    except ValueError:
        return r.status_code, r.text


def is_uuid(text):
    try:
        uuid.UUID(str(text))
        return True
    except ValueError:
        return False


def multiple_of(value, increment):
    return (D(value) % D(increment)) == 0


# --- market data -------------------------------------------------------------------------------

products = public.get_products()
by_id = {p["id"]: p for p in products} if isinstance(products, list) else {}
btc = by_id.get(PRODUCT, {})
check("products", btc.get("base_currency") == "BTC" and btc.get("quote_currency") == "USD"
      and D(btc.get("quote_increment", "0")) == D("0.01") and D(btc.get("base_increment", "0")) > 0
      and btc.get("status") == "online", short(products))
quote_inc, base_inc = D(btc["quote_increment"]), D(btc["base_increment"])

ticker = public.get_product_ticker(PRODUCT)
check("ticker", D(ticker["bid"]) < D(ticker["ask"]) and D(ticker["price"]) > 0 and isinstance(ticker["trade_id"], int)
      and multiple_of(ticker["bid"], quote_inc), short(ticker))

stats = public.get_product_24hr_stats(PRODUCT)
check("24h stats", D(stats["low"]) <= D(stats["last"]) <= D(stats["high"]) and D(stats["low"]) <= D(stats["open"]) <= D(stats["high"])
      and D(stats["volume"]) > 0 and D(stats["volume_30day"]) >= D(stats["volume"]), short(stats))

book1 = public.get_product_order_book(PRODUCT, level=1)
check("order book level 1", len(book1["bids"]) == 1 and len(book1["asks"]) == 1
      and D(book1["bids"][0][0]) < D(book1["asks"][0][0]) and isinstance(book1["bids"][0][2], int)
      and isinstance(book1["sequence"], int), short(book1))
book2 = public.get_product_order_book(PRODUCT, level=2)
bids2, asks2 = [D(b[0]) for b in book2["bids"]], [D(a[0]) for a in book2["asks"]]
check("order book level 2", len(bids2) > 1 and len(asks2) > 1 and bids2 == sorted(bids2, reverse=True)
      and len(set(bids2)) == len(bids2) and asks2 == sorted(asks2) and bids2[0] < asks2[0]
      and all(isinstance(row[2], int) and row[2] >= 1 and D(row[1]) > 0 for row in book2["bids"] + book2["asks"]),
      short(book2))
book3 = public.get_product_order_book(PRODUCT, level=3)
check("order book level 3", len(book3["bids"]) >= len(bids2) and all(is_uuid(row[2]) for row in book3["bids"] + book3["asks"])
      and D(book3["bids"][0][0]) < D(book3["asks"][0][0]), short(book3))

# The generator follows cb-after: 300 trades are three pages of 100.
trades = list(itertools.islice(public.get_product_trades(PRODUCT), 300))
ids = [t["trade_id"] for t in trades]
check("trades (paged generator, 300)", len(trades) == 300 and all(a > b for a, b in zip(ids, ids[1:]))
      and all(t["side"] in ("buy", "sell") and D(t["size"]) > 0 and D(t["price"]) > 0 for t in trades),
      short(trades[:3]))

for granularity in (60, 3600):
    candles = public.get_product_historic_rates(PRODUCT, granularity=granularity)
    times = [c[0] for c in candles] if isinstance(candles, list) else []
    check(f"candles granularity {granularity}", len(candles) > 0 and len(candles) <= 300
          and all(len(c) == 6 and all(isinstance(x, (int, float)) for x in c) for c in candles)
          and all(t % granularity == 0 for t in times) and all(a > b for a, b in zip(times, times[1:]))
          and all(c[1] <= min(c[3], c[4]) and max(c[3], c[4]) <= c[2] and c[5] >= 0 for c in candles),
          short(candles[:3]))
now = int(time.time())
start_iso = datetime.fromtimestamp(now - 3600 * 6, timezone.utc).isoformat()
end_iso = datetime.fromtimestamp(now, timezone.utc).isoformat()
ranged = public.get_product_historic_rates(PRODUCT, start=start_iso, end=end_iso, granularity=3600)
check("candles start/end range", isinstance(ranged, list) and 5 <= len(ranged) <= 7
      and all(now - 3600 * 7 <= c[0] <= now for c in ranged), short(ranged))
too_many = public.get_product_historic_rates(PRODUCT, start=str(now - 400 * 60), end=str(now), granularity=60)
check("candles over 300 buckets refused", too_many == {"message": "granularity too small for the requested time range. "
                                                        "Count of aggregations requested exceeds 300"}, short(too_many))

currencies = public.get_currencies()
cur = {c["id"]: c for c in currencies}
check("currencies", cur.get("USD", {}).get("details", {}).get("type") == "fiat"
      and cur.get("BTC", {}).get("details", {}).get("type") == "crypto" and "USDC" in cur, short(currencies[:2]))

server_time = public.get_time()
iso_epoch = datetime.fromisoformat(server_time["iso"].replace("Z", "+00:00")).timestamp()
check("time", abs(server_time["epoch"] - time.time()) < 10 and abs(iso_epoch - server_time["epoch"]) < 0.01, short(server_time))

# --- accounts ----------------------------------------------------------------------------------


def accounts():
    listed = client.get_accounts()
    if not isinstance(listed, list):
        check("accounts", False, short(listed))
    return {a["currency"]: a for a in listed}


accts = accounts()
check("accounts: balance = available + hold", len(accts) >= 4 and all(
    D(a["balance"]) == D(a["available"]) + D(a["hold"]) for a in accts.values()), short(list(accts.values())[:2]))
usd, btc_acct = accts["USD"], accts["BTC"]
one = client.get_account(usd["id"])
check("account by id", one.get("id") == usd["id"] and one.get("currency") == "USD"
      and D(one["balance"]) == D(one["available"]) + D(one["hold"]), short(one))

# Cancel-all per product: whatever the seed left resting on each product, from the listed set.
open_orders = list(client.get_orders())
check("open orders listed", all(o["status"] in ("open", "pending", "active") for o in open_orders), short(open_orders[:2]))
for product in sorted({o["product_id"] for o in open_orders}):
    listed = {o["id"] for o in open_orders if o["product_id"] == product}
    cancelled = client.cancel_all(product_id=product)
    left = list(client.get_orders(product_id=product))
    # An order the background market fills in between is not cancelled, so a subset.
    check(f"cancel_all {product}", isinstance(cancelled, list) and set(cancelled) <= listed
          and left == [], f"{short(cancelled)} listed {sorted(listed)} left {short(left)}")
check("no open orders left", list(client.get_orders()) == [])
accts = accounts()
# What is still held is held by pending withdrawals (the seed leaves one in BTC), none by an order.
left_holds = {c: list(client.get_account_holds(a["id"])) for c, a in accts.items() if D(a["hold"]) != 0}
check("holds released by cancel_all", D(accts["USD"]["hold"]) == 0 and all(
    all(h["type"] == "transfer" for h in hs) and sum(D(h["amount"]) for h in hs) == D(accts[c]["hold"])
    for c, hs in left_holds.items()), short(left_holds))

# With nothing resting, only this script moves the USD balance.
ledger = list(itertools.islice(client.get_account_history(usd["id"]), 200))
check("ledger (running balance)", len(ledger) > 0 and D(ledger[0]["balance"]) == D(client.get_account(usd["id"])["balance"])
      and all(D(a["balance"]) - D(a["amount"]) == D(b["balance"]) for a, b in zip(ledger, ledger[1:]))
      and all(e["type"] in ("match", "fee", "transfer", "conversion", "rebate") for e in ledger), short(ledger[:2]))

fees = client._send_message("get", "/fees")
maker, taker = D(fees["maker_fee_rate"]), D(fees["taker_fee_rate"])
check("fees", D(0) <= maker <= taker < D("0.01") and D(fees["usd_volume"]) >= 0, short(fees))

# --- a limit order: hold placed, found by id and client id, cancelled, hold released ----------

before = accounts()["USD"]
bid = D(public.get_product_ticker(PRODUCT)["bid"])
price = (bid / 2).quantize(quote_inc.normalize())
size = D("0.00100000")
client_oid = str(uuid.uuid4())
order = client.place_limit_order(PRODUCT, "buy", str(price), str(size), client_oid=client_oid)
check("limit buy placed", not_error(order) and is_uuid(order.get("id")) and order["status"] in ("pending", "open")
      and D(order["price"]) == price and D(order["size"]) == size and order.get("client_oid") == client_oid, short(order))
order_id = order["id"]
expected_hold = price * size * (1 + taker)
after = accounts()["USD"]
check("hold placed (price x size x (1 + fee))", D(after["hold"]) - D(before["hold"]) == expected_hold
      and D(before["available"]) - D(after["available"]) == expected_hold and D(after["balance"]) == D(before["balance"]),
      f"before {short(before)} after {short(after)} expected {expected_hold}")
holds = list(client.get_account_holds(usd["id"]))
mine = [h for h in holds if h.get("ref") == order_id]
check("hold listed", len(mine) == 1 and D(mine[0]["amount"]) == expected_hold and mine[0]["type"] == "order", short(holds))
got = client.get_order(order_id)
check("order by id", got.get("id") == order_id and got.get("status") == "open" and D(got["filled_size"]) == 0, short(got))
by_client = client.get_order("client:" + client_oid)
check("order by client:<oid>", by_client.get("id") == order_id, short(by_client))
listed = list(client.get_orders(product_id=PRODUCT, status="open"))
check("order in the open list", [o["id"] for o in listed] == [order_id], short(listed))
cancelled = client.cancel_order(order_id)
check("cancel order", cancelled == order_id, short(cancelled))
released = accounts()["USD"]
check("hold released", D(released["hold"]) == D(before["hold"]) and D(released["available"]) == D(before["available"]),
      f"before {short(before)} after {short(released)}")
check("hold gone from the list", [h for h in client.get_account_holds(usd["id"]) if h.get("ref") == order_id] == [])
again = client.cancel_order(order_id)
check("second cancel refused", again == {"message": "NotFound"}, short(again))
check("cancelled unfilled order purged", client.get_order(order_id) == {"message": "NotFound"})

# --- a market buy by funds, its fill, and balances moved by exactly what it traded -------------

before = accounts()
funds = D("100.00")
market = client.place_market_order(PRODUCT, "buy", funds=str(funds))
check("market buy by funds placed", not_error(market) and market.get("type") == "market"
      and D(market.get("specified_funds", 0)) == funds, short(market))
done = None
for _ in range(50):
    done = client.get_order(market["id"])
    if done.get("status") == "done" and done.get("settled"):
        break
    time.sleep(0.1)
check("market buy done", done.get("status") == "done" and done.get("done_reason") == "filled" and done.get("settled") is True
      and D(done["filled_size"]) > 0 and D(done["executed_value"]) + D(done["fill_fees"]) <= funds, short(done))
fills = list(client.get_fills(order_id=market["id"]))
ok_fills = len(fills) >= 1 and all(f["liquidity"] == "T" and D(f["fee"]) > 0 and f["side"] == "buy"
                                   and f["product_id"] == PRODUCT for f in fills)
check("fills (taker, fee > 0)", ok_fills, short(fills))
filled = sum(D(f["size"]) for f in fills)
cost = sum(D(f["price"]) * D(f["size"]) for f in fills)
fee = sum(D(f["fee"]) for f in fills)
check("fills add up to the order", filled == D(done["filled_size"]) and cost == D(done["executed_value"])
      and fee == D(done["fill_fees"]) and all(abs(D(f["fee"]) - D(f["price"]) * D(f["size"]) * taker) < D("0.0000001") for f in fills),
      f"{short(fills)} order {short(done)}")
after = accounts()
check("BTC balance up by exactly the size", D(after["BTC"]["balance"]) - D(before["BTC"]["balance"]) == filled,
      f"{before['BTC']['balance']} -> {after['BTC']['balance']}, filled {filled}")
check("USD balance down by exactly price x size + fee", D(before["USD"]["balance"]) - D(after["USD"]["balance"]) == cost + fee,
      f"{before['USD']['balance']} -> {after['USD']['balance']}, cost {cost} fee {fee}")
entries = [e for e in itertools.islice(client.get_account_history(usd["id"]), 20)
           if e.get("details", {}).get("order_id") == market["id"]]
check("ledger match and fee entries", sorted(e["type"] for e in entries) == ["fee", "match"]
      and sum(D(e["amount"]) for e in entries) == -(cost + fee), short(entries))
done_cancel = client.cancel_order(market["id"])
check("cancelling a done order refused", done_cancel == {"message": "Order already done"}, short(done_cancel))
by_product = list(itertools.islice(client.get_fills(product_id=PRODUCT), 5))
check("fills by product", by_product and by_product[0]["order_id"] == market["id"], short(by_product[:1]))

# --- profiles, transfers, conversion -----------------------------------------------------------

profiles = client._send_message("get", "/profiles")
default = [p for p in profiles if p.get("is_default")]
check("profiles", len(default) == 1 and default[0]["name"] == "default" and default[0]["id"] == usd["profile_id"], short(profiles))

wallets = {w["currency"]: w for w in client.get_coinbase_accounts()}
before = accounts()
deposit = client.coinbase_deposit("250.00", "USD", wallets["USD"]["id"])
check("deposit from a Coinbase account", not_error(deposit) and is_uuid(deposit.get("id")) and D(deposit["amount"]) == D(250)
      and deposit["currency"] == "USD", short(deposit))
after = accounts()
check("deposit credited", D(after["USD"]["balance"]) - D(before["USD"]["balance"]) == D(250), f"{short(before['USD'])} {short(after['USD'])}")
wallet_after = {w["currency"]: w for w in client.get_coinbase_accounts()}["USD"]
check("Coinbase wallet debited", D(wallets["USD"]["balance"]) - D(wallet_after["balance"]) == D(250), short(wallet_after))

eth_before = before["ETH"]
address = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"
withdrawal = client.crypto_withdraw("0.5", "ETH", address)
check("crypto withdrawal", not_error(withdrawal) and is_uuid(withdrawal.get("id")) and D(withdrawal["amount"]) == D("0.5")
      and withdrawal["currency"] == "ETH", short(withdrawal))
eth_after = accounts()["ETH"]
check("withdrawal held", D(eth_after["hold"]) - D(eth_before["hold"]) == D("0.5")
      and D(eth_after["balance"]) == D(eth_before["balance"]), f"{short(eth_before)} {short(eth_after)}")
eth_holds = [h for h in client.get_account_holds(eth_after["id"]) if h.get("ref") == withdrawal["id"]]
check("withdrawal hold listed", len(eth_holds) == 1 and eth_holds[0]["type"] == "transfer", short(eth_holds))
transfers = client._send_message("get", "/transfers")
t_by_id = {t["id"]: t for t in transfers}
w = t_by_id.get(withdrawal["id"], {})
dep = t_by_id.get(deposit["id"], {})
check("transfers list", w.get("type") == "withdraw" and w.get("completed_at") is None and D(w.get("amount", 0)) == D("0.5")
      and w.get("details", {}).get("crypto_address") == address and dep.get("type") == "deposit", short(transfers[:2]))
bad_address = client.crypto_withdraw("0.5", "ETH", "not-an-address")
check("malformed address refused", isinstance(bad_address, dict) and "message" in bad_address
      and accounts()["ETH"]["hold"] == eth_after["hold"], short(bad_address))

before = accounts()
conversion = client._send_message("post", "/conversions", data=json.dumps({"from": "USD", "to": "USDC", "amount": "100"}))
check("conversion USD to USDC", not_error(conversion) and conversion.get("from") == "USD" and conversion.get("to") == "USDC"
      and D(conversion.get("amount", 0)) == D(100) and conversion.get("from_account_id") == before["USD"]["id"]
      and conversion.get("to_account_id") == before["USDC"]["id"], short(conversion))
after = accounts()
check("conversion moved the funds", D(before["USD"]["balance"]) - D(after["USD"]["balance"]) == D(100)
      and D(after["USDC"]["balance"]) - D(before["USDC"]["balance"]) == D(100),
      f"USD {before['USD']['balance']} -> {after['USD']['balance']}, USDC {before['USDC']['balance']} -> {after['USDC']['balance']}")

# --- auth errors -------------------------------------------------------------------------------

wrong_secret = base64.b64encode(b"not the sandbox secret").decode()
status, body = raw("GET", "/accounts", cbpro.cbpro_auth.CBProAuth(KEY, wrong_secret, PASSPHRASE))
check("bad signature: 401 invalid signature", (status, body) == (401, {"message": "invalid signature"}), f"{status} {body}")
status, body = raw("GET", "/accounts", cbpro.cbpro_auth.CBProAuth(KEY, SECRET, "wrong-passphrase"))
check("wrong passphrase: 401 Invalid Passphrase", (status, body) == (401, {"message": "Invalid Passphrase"}), f"{status} {body}")
status, body = raw("GET", "/accounts", cbpro.cbpro_auth.CBProAuth("no-such-key", SECRET, PASSPHRASE))
check("unknown key: 401 Invalid API Key", (status, body) == (401, {"message": "Invalid API Key"}), f"{status} {body}")
real_time = cbpro.cbpro_auth.time.time
cbpro.cbpro_auth.time.time = lambda: real_time() - 120
try:
    status, body = raw("GET", "/accounts", client.auth)
finally:
    cbpro.cbpro_auth.time.time = real_time
check("stale timestamp: 401 request timestamp expired", (status, body) == (401, {"message": "request timestamp expired"}),
      f"{status} {body}")
viewer = cbpro.AuthenticatedClient("sandbox-view-key", SECRET, PASSPHRASE, api_url=url)
check("view-only key reads", isinstance(viewer.get_accounts(), list))
body = json.dumps({"product_id": PRODUCT, "side": "buy", "type": "limit", "price": str(price), "size": "0.001"})
status, answer = raw("POST", "/orders", viewer.auth, body)
check("view-only key trading: 403 Forbidden", (status, answer) == (403, {"message": "Forbidden"}), f"{status} {answer}")
check("view-only order placed nothing", list(client.get_orders()) == [])
print("PASSED cbpro")
