#!/usr/bin/env python3
"""Smoke test: ccxt's `coinbaseexchange` class (PyPI `ccxt` 4.5) against `opsdeck sandbox`.

Usage: coinbase_ccxt_python.py [COINBASE_BASE_URL]   (default $OPSDECK_COINBASE_URL, else http://127.0.0.1:7705)

The class's `urls['api']` is pointed at the sandbox (public and private), so no request leaves
loopback. Markets (precision from the increments), ticker, order book, OHLCV, trades, time and
fees; then with the sandbox key: balance, a limit buy below the market (open, fetched by id and
by client order id, listed, cancelled), a market buy by cost with its trades and balance moves,
cancel-all, a crypto withdrawal (LTC) and the deposits and withdrawals lists, and the auth errors as
ccxt's exceptions. Prints one line per check and exits 1 at the first failure. The market moves
in the background, so prices are checked for consistency, not values.
"""

import os
import sys
import time
import uuid

try:
    import ccxt
except ImportError as e:
    print(f"FAIL ccxt python: cannot import ccxt: {e}", file=sys.stderr)
    sys.exit(1)

url = (sys.argv[1] if len(sys.argv) > 1 else os.environ.get("OPSDECK_COINBASE_URL", "http://127.0.0.1:7705")).rstrip("/")
SECRET, PASSPHRASE = "c2FuZGJveC1zZWNyZXQ=", "sandbox-passphrase"
SYMBOL = "BTC/USD"


def exchange(key="sandbox-key", secret=SECRET, password=PASSPHRASE):
    ex = ccxt.coinbaseexchange({"apiKey": key, "secret": secret, "password": password, "enableRateLimit": False,
                                "timeout": 30000})
    # ccxt 4.5 keeps one URL per API ('public', 'private'), each with an {hostname} placeholder.
    if not isinstance(ex.urls.get("api"), dict) or set(ex.urls["api"]) != {"public", "private"}:
        check("the class's urls['api'] is {public, private}", False, repr(ex.urls.get("api")))
    ex.urls["api"] = {"public": url, "private": url}
    return ex


def check(name, condition, detail=""):
    if not condition:
        print(f"FAIL ccxt python: {name} {detail}"[:2000], file=sys.stderr)
        sys.exit(1)
    print(f"ok ccxt python: {name}")


def raises(call, kind):
    try:
        call()
    except kind as e:
        return str(e)
    except Exception as e:  # noqa: BLE001 - reported as the wrong kind
        return f"WRONG {type(e).__name__}: {e}"
    return "WRONG: no exception"


ex = exchange()
assert ccxt.__version__.startswith("4."), ccxt.__version__

markets = ex.load_markets()
btc = markets.get(SYMBOL, {})
check("load_markets", btc.get("id") == "BTC-USD" and btc.get("base") == "BTC" and btc.get("quote") == "USD"
      and btc.get("spot") is True and btc.get("active") is True and "ETH/BTC" in markets, repr(btc)[:600])
check("precision from the increments", btc["precision"]["price"] == 0.01 and btc["precision"]["amount"] == 1e-08
      and markets["DOGE/USD"]["precision"]["amount"] == 0.1 and markets["ETH/BTC"]["precision"]["price"] == 1e-05
      and btc["limits"]["cost"]["min"] == 1.0, repr(btc["precision"]) + repr(btc["limits"]))
check("currencies", ex.currencies.get("USD", {}).get("id") == "USD" and "BTC" in ex.currencies, repr(list(ex.currencies))[:300])

server_ms = ex.fetch_time()
check("fetch_time", abs(server_ms - time.time() * 1000) < 10_000, repr(server_ms))

ticker = ex.fetch_ticker(SYMBOL)
check("fetch_ticker", ticker["symbol"] == SYMBOL and 0 < ticker["bid"] < ticker["ask"] and ticker["last"] > 0
      and ticker["timestamp"] is not None, repr(ticker)[:600])

tickers = ex.fetch_tickers()
check("fetch_tickers", SYMBOL in tickers and "ETH/USD" in tickers and tickers[SYMBOL]["last"] > 0,
      repr(tickers.get(SYMBOL))[:600])

book = ex.fetch_order_book(SYMBOL)
bids, asks = [b[0] for b in book["bids"]], [a[0] for a in book["asks"]]
check("fetch_order_book", len(bids) > 1 and len(asks) > 1 and bids == sorted(bids, reverse=True) and asks == sorted(asks)
      and bids[0] < asks[0] and all(b[1] > 0 for b in book["bids"] + book["asks"]) and book["nonce"] is not None,
      repr(book)[:600])

candles = ex.fetch_ohlcv(SYMBOL, "1m", limit=60)
times = [c[0] for c in candles]
check("fetch_ohlcv 1m", 0 < len(candles) <= 60 and all(t % 60_000 == 0 for t in times) and times == sorted(times)
      and len(set(times)) == len(times) and all(c[3] <= min(c[1], c[4]) and max(c[1], c[4]) <= c[2] and c[5] >= 0 for c in candles)
      and times[-1] > time.time() * 1000 - 3_600_000, repr(candles[-3:]))
hours = ex.fetch_ohlcv(SYMBOL, "1h", since=int(time.time() - 6 * 3600) * 1000, limit=6)
check("fetch_ohlcv 1h since", 1 <= len(hours) <= 6 and all(c[0] % 3_600_000 == 0 for c in hours), repr(hours))

trades = ex.fetch_trades(SYMBOL, limit=50)
check("fetch_trades", 0 < len(trades) <= 50 and all(t["side"] in ("buy", "sell") and t["amount"] > 0 and t["price"] > 0
                                                    and t["symbol"] == SYMBOL for t in trades)
      and [t["timestamp"] for t in trades] == sorted(t["timestamp"] for t in trades), repr(trades[:2])[:600])

fees = ex.fetch_trading_fees()
taker = fees[SYMBOL]["taker"]
check("fetch_trading_fees", 0 <= fees[SYMBOL]["maker"] <= taker < 0.01, repr(fees[SYMBOL]))

# --- private -----------------------------------------------------------------------------------

cancelled = ex.cancel_all_orders()
check("cancel_all_orders (all products)", isinstance(cancelled, list), repr(cancelled)[:300])
check("no open orders", ex.fetch_open_orders() == [])

balance = ex.fetch_balance()
usd = balance["USD"]
check("fetch_balance", usd["total"] > 0 and abs(usd["total"] - (usd["free"] + usd["used"])) < 1e-6
      and balance["BTC"]["total"] > 0 and all(abs(b["total"] - b["free"] - b["used"]) < 1e-6
                                                for c, b in balance.items() if c in ex.currencies),
      repr(usd))

bid = ex.fetch_ticker(SYMBOL)["bid"]
price = float(ex.price_to_precision(SYMBOL, bid * 0.5))
client_id = str(uuid.uuid4())
order = ex.create_order(SYMBOL, "limit", "buy", 0.001, price, {"clientOrderId": client_id})
check("create_order limit", order["id"] and order["symbol"] == SYMBOL and order["type"] == "limit" and order["side"] == "buy"
      and order["price"] == price and order["amount"] == 0.001 and order["status"] == "open", repr(order)[:600])
after = ex.fetch_balance()["USD"]
hold = price * 0.001 * (1 + taker)
check("limit order holds its cost", abs((after["used"] - usd["used"]) - hold) < 1e-6
      and abs(after["total"] - usd["total"]) < 1e-6, f"{usd} -> {after}, hold {hold}")
got = ex.fetch_order(order["id"])
check("fetch_order", got["id"] == order["id"] and got["status"] == "open" and got["filled"] == 0
      and got["remaining"] == 0.001 and got["clientOrderId"] == client_id, repr(got)[:600])
by_client = ex.fetch_order(None, None, {"clientOrderId": client_id})
check("fetch_order by clientOrderId", by_client["id"] == order["id"], repr(by_client)[:300])
open_orders = ex.fetch_open_orders(SYMBOL)
check("fetch_open_orders", [o["id"] for o in open_orders] == [order["id"]] and open_orders[0]["status"] == "open",
      repr(open_orders)[:600])
ex.cancel_order(order["id"], SYMBOL)  # ccxt sends {"product_id": "BTC/USD"} as the DELETE body
check("cancel_order", ex.fetch_open_orders(SYMBOL) == [])
released = ex.fetch_balance()["USD"]
check("cancel releases the hold", abs(released["used"] - usd["used"]) < 1e-6, f"{usd} -> {released}")
check("cancelled order: OrderNotFound", raises(lambda: ex.fetch_order(order["id"]), ccxt.OrderNotFound).startswith("coinbaseexchange"))
check("second cancel: OrderNotFound", raises(lambda: ex.cancel_order(order["id"]), ccxt.OrderNotFound).startswith("coinbaseexchange"))

sell_price = float(ex.price_to_precision(SYMBOL, ex.fetch_ticker(SYMBOL)["ask"] * 2))
sell = ex.create_order(SYMBOL, "limit", "sell", 0.001, sell_price)
cancelled = ex.cancel_all_orders(SYMBOL)
check("cancel_all_orders (one product)", cancelled[0]["info"] == [sell["id"]], repr(cancelled)[:300])

before = ex.fetch_balance()
market = ex.create_order(SYMBOL, "market", "buy", None, None, {"cost": 50})
filled = None
for _ in range(50):
    filled = ex.fetch_order(market["id"])
    if filled["status"] == "closed":
        break
    time.sleep(0.1)
check("create_order market (by cost)", filled["status"] == "closed" and filled["filled"] > 0 and filled["type"] == "market"
      and filled["cost"] + filled["fee"]["cost"] <= 50 + 1e-9 and filled["fee"]["currency"] == "USD", repr(filled)[:600])
mine = [t for t in ex.fetch_my_trades(SYMBOL, limit=20) if t["order"] == market["id"]]
amount = sum(t["amount"] for t in mine)
cost = sum(t["cost"] for t in mine)
fee = sum(t["fee"]["cost"] for t in mine)
check("fetch_my_trades", mine and all(t["takerOrMaker"] == "taker" and t["fee"]["cost"] > 0 and t["side"] == "buy"
                                      and t["fee"]["currency"] == "USD" for t in mine)
      and abs(amount - filled["filled"]) < 1e-9, repr(mine)[:600])
after = ex.fetch_balance()
check("balances moved by the trades", abs((after["BTC"]["total"] - before["BTC"]["total"]) - amount) < 1e-9
      and abs((before["USD"]["total"] - after["USD"]["total"]) - (cost + fee)) < 1e-6,
      f"BTC {before['BTC']['total']} -> {after['BTC']['total']} ({amount}); USD {before['USD']['total']} -> {after['USD']['total']} ({cost}+{fee})")
done_cancel = raises(lambda: ex.cancel_order(market["id"]), ccxt.OrderNotFound)
check("a done order cannot be cancelled", "Order already done" in done_cancel and not done_cancel.startswith("WRONG"), done_cancel)

# LTC here, ETH in the cbpro check, SOL in the Node one: no other withdrawal of the currency
# completes (on the sandbox clock) between two reads of its balance.
address = "ltc1qg42tkwuuxefutzxezdkdel39gfstuap288mfea"
ltc_before = ex.fetch_balance()["LTC"]
withdrawal = ex.withdraw("LTC", 0.25, address)
check("withdraw (crypto)", withdrawal["id"] and withdrawal["amount"] == 0.25 and withdrawal["currency"] == "LTC", repr(withdrawal)[:600])
ltc_after = ex.fetch_balance()["LTC"]
check("withdrawal held", abs((ltc_after["used"] - ltc_before["used"]) - 0.25) < 1e-9, f"{ltc_before} -> {ltc_after}")
withdrawals = ex.fetch_withdrawals("LTC")
w = [t for t in withdrawals if t["id"] == withdrawal["id"]]
check("fetch_withdrawals", len(w) == 1 and w[0]["type"] == "withdrawal" and w[0]["status"] == "pending"
      and abs(w[0]["amount"] + w[0]["fee"]["cost"] - 0.25) < 1e-9 and w[0]["address"] == address and w[0]["currency"] == "LTC"
      and all(t["type"] == "withdrawal" for t in withdrawals), repr(withdrawals)[:600])
deposits = ex.fetch_deposits("USD")
check("fetch_deposits", len(deposits) >= 1 and all(t["type"] == "deposit" and t["currency"] == "USD" for t in deposits)
      and any(t["status"] == "ok" and t["amount"] > 0 for t in deposits), repr(deposits)[:600])
everything = ex.fetch_deposits_withdrawals()
check("fetch_deposits_withdrawals", any(t["id"] == withdrawal["id"] for t in everything)
      and {t["type"] for t in everything} == {"deposit", "withdrawal"}, repr(everything[:2])[:600])

check("bad signature: AuthenticationError",
      "invalid signature" in raises(lambda: exchange(secret="bm90IHRoZSBzZWNyZXQ=").fetch_balance(), ccxt.AuthenticationError))
check("wrong passphrase: AuthenticationError",
      "Invalid Passphrase" in raises(lambda: exchange(password="nope").fetch_balance(), ccxt.AuthenticationError))
viewer = exchange(key="sandbox-view-key")
check("view-only key reads", viewer.fetch_balance()["USD"]["total"] > 0)
# ccxt maps a bare HTTP 403 to ExchangeNotAvailable (its table for every exchange); the body is the real one.
denied = raises(lambda: viewer.create_order(SYMBOL, "limit", "buy", 0.001, price), ccxt.ExchangeNotAvailable)
check("view-only key trading: 403 Forbidden", '403 Forbidden {"message":"Forbidden"}' in denied and not denied.startswith("WRONG"), denied)
check("nothing placed by the view-only key", ex.fetch_open_orders() == [])
print("PASSED ccxt python")
