// Smoke test: ccxt.pro's `coinbaseexchange` (npm `ccxt` 4.5, its WebSocket classes) against the
// Coinbase Exchange feed of `opsdeck sandbox`.
//
// Usage: CCXT_JS_DIR=<dir with node_modules/ccxt> node coinbase_feed_node.mjs [COINBASE_BASE_URL]
// The class's `urls.api` is pointed at the sandbox: REST at the base URL, the feed at the same
// port as ws:// (ccxt needs `loadHttpProxyAgent()` for a ws:// URL). watchTicker (checked against
// the REST ticker), watchTrades (a trade we make over REST arrives), watchOrderBook (the signed
// level2 channel: a sorted, uncrossed book), and watchOrders for our own order placed over REST:
// open when received, canceled when cancelled, closed when a market order fills. Prints one line
// per check and exits 1 at the first failure. Every wait is bounded.
import { createRequire } from "node:module";
import { randomUUID } from "node:crypto";
import path from "node:path";

const require = createRequire(path.join(process.env.CCXT_JS_DIR || process.cwd(), "package.json"));
const ccxt = require("ccxt");

const url = (process.argv[2] || process.env.OPSDECK_COINBASE_URL || "http://127.0.0.1:7705").replace(/\/$/, "");
const feed = "ws://" + url.split("://")[1];
const SYMBOL = "BTC/USD";
const WAIT_MS = 30000;

function check(name, condition, detail = "") {
  if (!condition) {
    console.error(`FAIL ccxt.pro node: ${name} ${detail}`.slice(0, 2000));
    process.exit(1);
  }
  console.log(`ok ccxt.pro node: ${name}`);
}

const show = (v) => JSON.stringify(v, (k, x) => (k === "info" ? undefined : x)).slice(0, 400);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function bounded(promise, what, ms = WAIT_MS) {
  let timer;
  const late = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`nothing within ${ms / 1000} s`)), ms);
  });
  try {
    return await Promise.race([promise, late]);
  } catch (e) {
    check(what, false, `(${e.message})`);
  } finally {
    clearTimeout(timer);
  }
}

// Our order once watchOrders has it with `status`. ccxt answers a watch with what arrives after
// it is called, so what arrived before is read from its cache, looked at again after each answer
// and each second without one.
async function orderUntil(ex, id, status) {
  for (let i = 0; i < WAIT_MS / 1000; i++) {
    const found = [...(ex.orders || [])].find((o) => o.id === id && o.status === status);
    if (found) return found;
    let timer;
    await Promise.race([ex.watchOrders(SYMBOL), new Promise((r) => (timer = setTimeout(r, 1000)))]).catch(() => {});
    clearTimeout(timer);
  }
  check(`watchOrders tells order ${id} is ${status}`, false, `(not within ${WAIT_MS / 1000} s)`);
}

const ex = new ccxt.pro.coinbaseexchange({
  apiKey: "sandbox-key",
  secret: "c2FuZGJveC1zZWNyZXQ=",
  password: "sandbox-passphrase",
  enableRateLimit: false,
  timeout: 30000,
});
ex.urls.api = { public: url, private: url, ws: feed };
await ex.loadHttpProxyAgent();
try {
  const ticker = await bounded(ex.watchTicker(SYMBOL), "watchTicker");
  check("watchTicker: a BTC/USD ticker", ticker.symbol === SYMBOL && ticker.last > 0, show(ticker));
  check("watchTicker: bid below ask", ticker.bid < ticker.ask, `${ticker.bid} ${ticker.ask}`);
  const rest = await ex.fetchTicker(SYMBOL);
  check("watchTicker: the 24-hour volume is REST's", Math.abs(ticker.baseVolume - rest.baseVolume) < 1,
    `${ticker.baseVolume} vs ${rest.baseVolume}`);

  const trades = ex.watchTrades(SYMBOL);
  await sleep(500);
  const bought = await ex.createOrder(SYMBOL, "market", "buy", 0.0001);
  let seen = await bounded(trades, "watchTrades");
  check("watchTrades: trades with a price, an amount and a side",
    seen.length > 0 && seen.every((t) => t.price > 0 && t.amount > 0 && ["buy", "sell"].includes(t.side)), show(seen));
  let ours = [];
  for (let i = 0; i < 50 && ours.length === 0; i++) {
    ours = seen.filter((t) => t.info.taker_order_id === bought.id);
    if (ours.length === 0) seen = await bounded(ex.watchTrades(SYMBOL), "watchTrades: our market buy's trade");
  }
  check("watchTrades: our market buy's trade, bought by the taker", ours.length > 0 && ours[0].side === "buy", show(ours));

  let book = await bounded(ex.watchOrderBook(SYMBOL), "watchOrderBook");
  const { bids, asks } = book;
  check("watchOrderBook: both sides", bids.length > 0 && asks.length > 0, `${bids.length} ${asks.length}`);
  const descending = bids.every((b, i) => i === 0 || bids[i - 1][0] > b[0]);
  const ascending = asks.every((a, i) => i === 0 || asks[i - 1][0] < a[0]);
  check("watchOrderBook: sorted and not crossed", descending && ascending && bids[0][0] < asks[0][0],
    `${JSON.stringify(bids.slice(0, 3))} ${JSON.stringify(asks.slice(0, 3))}`);
  book = await bounded(ex.watchOrderBook(SYMBOL), "watchOrderBook: an update");
  check("watchOrderBook: updates keep it uncrossed", book.bids[0][0] < book.asks[0][0]);

  const first = ex.watchOrders(SYMBOL);
  await sleep(500);
  const price = Number(ex.priceToPrecision(SYMBOL, ticker.bid * 0.5));
  const clientId = randomUUID();
  const placed = await ex.createOrder(SYMBOL, "limit", "buy", 0.001, price, { clientOrderId: clientId });
  const orders = await bounded(first, "watchOrders: our order received");
  const mine = orders.filter((o) => o.id === placed.id);
  check("watchOrders: our limit buy, open, with its client order id",
    mine.length > 0 && mine[0].status === "open" && mine[0].clientOrderId === clientId, show(orders));
  await ex.cancelOrder(placed.id, SYMBOL);
  const cancelled = await orderUntil(ex, placed.id, "canceled");
  check("watchOrders: cancelled over REST, canceled on the feed", cancelled.remaining === 0.001, show(cancelled));
  const filled = await ex.createOrder(SYMBOL, "market", "buy", 0.0002);
  const closed = await orderUntil(ex, filled.id, "closed");
  check("watchOrders: a market buy fills: closed, all of it", Math.abs(closed.filled - 0.0002) < 1e-12, show(closed));
} finally {
  await ex.close();
}
