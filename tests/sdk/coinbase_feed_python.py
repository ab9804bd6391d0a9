#!/usr/bin/env python3
"""Smoke test: ccxt.pro's `coinbaseexchange` (PyPI `ccxt` 4.5, its WebSocket classes) against the
Coinbase Exchange feed of `opsdeck sandbox`.

Usage: coinbase_feed_python.py [COINBASE_BASE_URL]   (default $OPSDECK_COINBASE_URL, else http://127.0.0.1:7705)

The class's `urls['api']` is pointed at the sandbox: REST at the base URL, the feed at the same
port as ws://. watch_ticker (checked against the REST ticker), watch_trades (a trade we make over
REST arrives), watch_order_book (the signed level2 channel: a sorted, uncrossed book), and
watch_orders for our own order placed over REST: open when received, canceled when cancelled,
closed when a market order fills. Prints one line per check and exits 1 at the first failure.
Every wait is bounded.
"""

import asyncio
import os
import sys
import uuid

try:
    import ccxt.pro as ccxtpro
except ImportError as e:
    print(f"FAIL ccxt.pro python: cannot import ccxt.pro: {e}", file=sys.stderr)
    sys.exit(1)

url = (sys.argv[1] if len(sys.argv) > 1 else os.environ.get("OPSDECK_COINBASE_URL", "http://127.0.0.1:7705")).rstrip("/")
feed = "ws://" + url.split("://", 1)[1]
SECRET, PASSPHRASE = "c2FuZGJveC1zZWNyZXQ=", "sandbox-passphrase"
SYMBOL = "BTC/USD"
WAIT = 30


def check(name, condition, detail=""):
    if not condition:
        print(f"FAIL ccxt.pro python: {name} {detail}"[:2000], file=sys.stderr)
        sys.exit(1)
    print(f"ok ccxt.pro python: {name}")


async def bounded(awaitable, what):
    try:
        return await asyncio.wait_for(awaitable, WAIT)
    except asyncio.TimeoutError:
        check(what, False, f"(nothing within {WAIT} s)")


async def order_until(ex, order_id, status):
    """Our order once watch_orders has it with `status`. ccxt answers a watch with what arrives
    after it is called, so what arrived before is read from its cache, looked at again after
    each answer and each second without one."""
    for _ in range(WAIT):
        for order in list(ex.orders or []):
            if order["id"] == order_id and order["status"] == status:
                return order
        try:
            await asyncio.wait_for(ex.watch_orders(SYMBOL), 1)
        except asyncio.TimeoutError:
            pass
    check(f"watch_orders tells order {order_id} is {status}", False, f"(not within {WAIT} s)")


async def main():
    ex = ccxtpro.coinbaseexchange({"apiKey": "sandbox-key", "secret": SECRET, "password": PASSPHRASE,
                                   "enableRateLimit": False, "timeout": 30000})
    ex.urls["api"] = {"public": url, "private": url, "ws": feed}
    try:
        ticker = await bounded(ex.watch_ticker(SYMBOL), "watch_ticker")
        check("watch_ticker: a BTC/USD ticker", ticker["symbol"] == SYMBOL and ticker["last"] > 0, repr(ticker)[:400])
        check("watch_ticker: bid below ask", ticker["bid"] is not None and ticker["bid"] < ticker["ask"],
              f"{ticker['bid']} {ticker['ask']}")
        rest = await ex.fetch_ticker(SYMBOL)
        check("watch_ticker: the 24-hour volume is REST's", abs(ticker["baseVolume"] - rest["baseVolume"]) < 1,
              f"{ticker['baseVolume']} vs {rest['baseVolume']}")

        trades = asyncio.ensure_future(ex.watch_trades(SYMBOL))
        await asyncio.sleep(0.5)
        bought = await ex.create_order(SYMBOL, "market", "buy", 0.0001)
        seen = await bounded(trades, "watch_trades")
        check("watch_trades: trades with a price, an amount and a side",
              seen and all(t["price"] > 0 and t["amount"] > 0 and t["side"] in ("buy", "sell") for t in seen),
              repr(seen)[:400])
        ours = []
        for _ in range(50):
            ours = [t for t in seen if t["info"].get("taker_order_id") == bought["id"]]
            if ours:
                break
            seen = await bounded(ex.watch_trades(SYMBOL), "watch_trades: our market buy's trade")
        check("watch_trades: our market buy's trade, bought by the taker", ours and ours[0]["side"] == "buy",
              repr(ours)[:400])

        book = await bounded(ex.watch_order_book(SYMBOL), "watch_order_book")
        bids, asks = book["bids"], book["asks"]
        check("watch_order_book: both sides", len(bids) > 0 and len(asks) > 0, f"{len(bids)} {len(asks)}")
        check("watch_order_book: sorted and not crossed",
              all(bids[i][0] > bids[i + 1][0] for i in range(len(bids) - 1))
              and all(asks[i][0] < asks[i + 1][0] for i in range(len(asks) - 1)) and bids[0][0] < asks[0][0],
              f"{bids[:3]} {asks[:3]}")
        book = await bounded(ex.watch_order_book(SYMBOL), "watch_order_book: an update")
        check("watch_order_book: updates keep it uncrossed", book["bids"][0][0] < book["asks"][0][0])

        first = asyncio.ensure_future(ex.watch_orders(SYMBOL))
        await asyncio.sleep(0.5)
        price = float(ex.price_to_precision(SYMBOL, ticker["bid"] * 0.5))
        client_id = str(uuid.uuid4())
        placed = await ex.create_order(SYMBOL, "limit", "buy", 0.001, price, {"clientOrderId": client_id})
        orders = await bounded(first, "watch_orders: our order received")
        mine = [o for o in orders if o["id"] == placed["id"]]
        check("watch_orders: our limit buy, open, with its client order id",
              mine and mine[0]["status"] == "open" and mine[0]["clientOrderId"] == client_id, repr(orders)[:400])
        await ex.cancel_order(placed["id"], SYMBOL)
        cancelled = await order_until(ex, placed["id"], "canceled")
        check("watch_orders: cancelled over REST, canceled on the feed", cancelled["remaining"] == 0.001,
              repr(cancelled)[:400])
        filled = await ex.create_order(SYMBOL, "market", "buy", 0.0002)
        closed = await order_until(ex, filled["id"], "closed")
        check("watch_orders: a market buy fills: closed, all of it", abs(closed["filled"] - 0.0002) < 1e-12,
              repr(closed)[:400])
    finally:
        await ex.close()


asyncio.run(main())
