// Smoke test: ccxt's `coinbaseexchange` class (npm `ccxt` 4.5) against `opsdeck sandbox`.
//
// Usage: CCXT_JS_DIR=<dir with node_modules/ccxt> node coinbase_ccxt_node.mjs [COINBASE_BASE_URL]
// The class's `urls.api` is pointed at the sandbox (public and private), so no request leaves
// loopback. Markets (precision from the increments), ticker, order book, OHLCV, trades, time and
// fees; then with the sandbox key: balance, a limit buy below the market (open, fetched by id and
// by client order id, listed, cancelled), a market buy by cost with its trades and balance moves,
// cancel-all, a crypto withdrawal (SOL) and the deposits and withdrawals lists, and the auth errors as
// ccxt's exceptions. Prints one line per check and exits 1 at the first failure. The market moves
// in the background, so prices are checked for consistency, not values.
import { createRequire } from "node:module";
import { randomUUID } from "node:crypto";
import path from "node:path";

const require = createRequire(path.join(process.env.CCXT_JS_DIR || process.cwd(), "package.json"));
const ccxt = require("ccxt");

const url = (process.argv[2] || process.env.OPSDECK_COINBASE_URL || "http://127.0.0.1:7705").replace(/\/$/, "");
const SECRET = "c2FuZGJveC1zZWNyZXQ=";
const PASSPHRASE = "sandbox-passphrase";
const SYMBOL = "BTC/USD";

function check(name, condition, detail = "") {
  if (!condition) {
    console.error(`FAIL ccxt node: ${name} ${detail}`.slice(0, 2000));
    process.exit(1);
  }
  console.log(`ok ccxt node: ${name}`);
}

const show = (v) => JSON.stringify(v, (k, x) => (k === "info" ? undefined : x)).slice(0, 600);
const close = (a, b, eps = 1e-9) => Math.abs(a - b) < eps;
const sorted = (xs, cmp) => xs.every((x, i) => i === 0 || cmp(xs[i - 1], x));

function exchange({ key = "sandbox-key", secret = SECRET, password = PASSPHRASE } = {}) {
  const ex = new ccxt.coinbaseexchange({ apiKey: key, secret, password, enableRateLimit: false, timeout: 30000 });
  // ccxt 4.5 keeps one URL per API ('public', 'private'), each with a {hostname} placeholder.
  const api = ex.urls.api;
  if (typeof api !== "object" || Object.keys(api).sort().join() !== "private,public") {
    check("the class's urls.api is {public, private}", false, JSON.stringify(api));
  }
  ex.urls.api = { public: url, private: url };
  return ex;
}

async function raises(call, kind) {
  try {
    await call();
  } catch (e) {
    return e instanceof kind ? String(e.message) : `WRONG ${e.constructor.name}: ${e.message}`;
  }
  return "WRONG: no exception";
}

const ex = exchange();
check("ccxt 4.x", String(ccxt.version).startsWith("4."), ccxt.version);

const markets = await ex.loadMarkets();
const btc = markets[SYMBOL] || {};
check("loadMarkets", btc.id === "BTC-USD" && btc.base === "BTC" && btc.quote === "USD" && btc.spot === true
  && btc.active === true && "ETH/BTC" in markets, show(btc));
check("precision from the increments", btc.precision.price === 0.01 && btc.precision.amount === 1e-8
  && markets["DOGE/USD"].precision.amount === 0.1 && markets["ETH/BTC"].precision.price === 1e-5
  && btc.limits.cost.min === 1, show([btc.precision, btc.limits]));
check("currencies", ex.currencies.USD?.id === "USD" && "BTC" in ex.currencies, Object.keys(ex.currencies).join());

const serverMs = await ex.fetchTime();
check("fetchTime", Math.abs(serverMs - Date.now()) < 10_000, String(serverMs));

const ticker = await ex.fetchTicker(SYMBOL);
check("fetchTicker", ticker.symbol === SYMBOL && ticker.bid > 0 && ticker.bid < ticker.ask && ticker.last > 0
  && ticker.timestamp !== undefined, show(ticker));

const tickers = await ex.fetchTickers();
check("fetchTickers", tickers[SYMBOL] !== undefined && tickers["ETH/USD"] !== undefined && tickers[SYMBOL].last > 0,
  show(tickers[SYMBOL]));

const book = await ex.fetchOrderBook(SYMBOL);
const bids = book.bids.map((b) => b[0]);
const asks = book.asks.map((a) => a[0]);
check("fetchOrderBook", bids.length > 1 && asks.length > 1 && sorted(bids, (a, b) => a > b) && sorted(asks, (a, b) => a < b)
  && bids[0] < asks[0] && [...book.bids, ...book.asks].every((r) => r[1] > 0) && book.nonce !== undefined, show(book));

const candles = await ex.fetchOHLCV(SYMBOL, "1m", undefined, 60);
const times = candles.map((c) => c[0]);
check("fetchOHLCV 1m", candles.length > 0 && candles.length <= 60 && times.every((t) => t % 60_000 === 0)
  && sorted(times, (a, b) => a < b) && candles.every((c) => c[3] <= Math.min(c[1], c[4]) && Math.max(c[1], c[4]) <= c[2] && c[5] >= 0)
  && times[times.length - 1] > Date.now() - 3_600_000, show(candles.slice(-3)));
const hours = await ex.fetchOHLCV(SYMBOL, "1h", Math.floor(Date.now() / 1000 - 6 * 3600) * 1000, 6);
check("fetchOHLCV 1h since", hours.length >= 1 && hours.length <= 6 && hours.every((c) => c[0] % 3_600_000 === 0), show(hours));

const trades = await ex.fetchTrades(SYMBOL, undefined, 50);
check("fetchTrades", trades.length > 0 && trades.length <= 50 && trades.every((t) => ["buy", "sell"].includes(t.side)
  && t.amount > 0 && t.price > 0 && t.symbol === SYMBOL) && sorted(trades.map((t) => t.timestamp), (a, b) => a <= b),
  show(trades.slice(0, 2)));

const fees = await ex.fetchTradingFees();
const taker = fees[SYMBOL].taker;
check("fetchTradingFees", fees[SYMBOL].maker >= 0 && fees[SYMBOL].maker <= taker && taker < 0.01, show(fees[SYMBOL]));

// --- private ------------------------------------------------------------------------------------

const all = await ex.cancelAllOrders();
check("cancelAllOrders (all products)", Array.isArray(all), show(all));
check("no open orders", (await ex.fetchOpenOrders()).length === 0);

const balance = await ex.fetchBalance();
const usd = balance.USD;
check("fetchBalance", usd.total > 0 && close(usd.total, usd.free + usd.used, 1e-6) && balance.BTC.total > 0
  && Object.keys(ex.currencies).filter((c) => balance[c]).every((c) => close(balance[c].total, balance[c].free + balance[c].used, 1e-6)),
  show(usd));

const price = Number(ex.priceToPrecision(SYMBOL, (await ex.fetchTicker(SYMBOL)).bid * 0.5));
const clientId = randomUUID();
const order = await ex.createOrder(SYMBOL, "limit", "buy", 0.001, price, { clientOrderId: clientId });
check("createOrder limit", order.id && order.symbol === SYMBOL && order.type === "limit" && order.side === "buy"
  && order.price === price && order.amount === 0.001 && order.status === "open", show(order));
let after = (await ex.fetchBalance()).USD;
const hold = price * 0.001 * (1 + taker);
check("limit order holds its cost", close(after.used - usd.used, hold, 1e-6) && close(after.total, usd.total, 1e-6),
  `${show(usd)} -> ${show(after)}, hold ${hold}`);
const got = await ex.fetchOrder(order.id);
check("fetchOrder", got.id === order.id && got.status === "open" && got.filled === 0 && got.remaining === 0.001
  && got.clientOrderId === clientId, show(got));
const byClient = await ex.fetchOrder(undefined, undefined, { clientOrderId: clientId });
check("fetchOrder by clientOrderId", byClient.id === order.id, show(byClient));
const open = await ex.fetchOpenOrders(SYMBOL);
check("fetchOpenOrders", open.length === 1 && open[0].id === order.id && open[0].status === "open", show(open));
await ex.cancelOrder(order.id, SYMBOL);
check("cancelOrder", (await ex.fetchOpenOrders(SYMBOL)).length === 0);
const released = (await ex.fetchBalance()).USD;
check("cancel releases the hold", close(released.used, usd.used, 1e-6), `${show(usd)} -> ${show(released)}`);
let err = await raises(() => ex.fetchOrder(order.id), ccxt.OrderNotFound);
check("cancelled order: OrderNotFound", err.startsWith("coinbaseexchange"), err);
err = await raises(() => ex.cancelOrder(order.id), ccxt.OrderNotFound);
check("second cancel: OrderNotFound", err.startsWith("coinbaseexchange"), err);

const sellPrice = Number(ex.priceToPrecision(SYMBOL, (await ex.fetchTicker(SYMBOL)).ask * 2));
const sell = await ex.createOrder(SYMBOL, "limit", "sell", 0.001, sellPrice);
const cancelled = await ex.cancelAllOrders(SYMBOL);
check("cancelAllOrders (one product)", JSON.stringify(cancelled[0].info) === JSON.stringify([sell.id]), show(cancelled));

const before = await ex.fetchBalance();
const market = await ex.createOrder(SYMBOL, "market", "buy", undefined, undefined, { cost: 50 });
let filled;
for (let i = 0; i < 50; i++) {
  filled = await ex.fetchOrder(market.id);
  if (filled.status === "closed") break;
  await new Promise((r) => setTimeout(r, 100));
}
check("createOrder market (by cost)", filled.status === "closed" && filled.filled > 0 && filled.type === "market"
  && filled.cost + filled.fee.cost <= 50 + 1e-9 && filled.fee.currency === "USD", show(filled));
const mine = (await ex.fetchMyTrades(SYMBOL, undefined, 20)).filter((t) => t.order === market.id);
const amount = mine.reduce((s, t) => s + t.amount, 0);
const cost = mine.reduce((s, t) => s + t.cost, 0);
const fee = mine.reduce((s, t) => s + t.fee.cost, 0);
check("fetchMyTrades", mine.length > 0 && mine.every((t) => t.takerOrMaker === "taker" && t.fee.cost > 0 && t.side === "buy"
  && t.fee.currency === "USD") && close(amount, filled.filled), show(mine));
after = await ex.fetchBalance();
check("balances moved by the trades", close(after.BTC.total - before.BTC.total, amount)
  && close(before.USD.total - after.USD.total, cost + fee, 1e-6),
  `BTC ${before.BTC.total} -> ${after.BTC.total} (${amount}); USD ${before.USD.total} -> ${after.USD.total} (${cost}+${fee})`);
err = await raises(() => ex.cancelOrder(market.id), ccxt.OrderNotFound);
check("a done order cannot be cancelled", err.includes("Order already done"), err);

// SOL here, ETH in the cbpro check, LTC in the ccxt Python one: no other withdrawal of the
// currency completes (on the sandbox clock) between two reads of its balance.
const address = "7EcDhSYGxXyscszYEp35KHN8vvw3svAuLKTzXwCFLtV";
const solBefore = (await ex.fetchBalance()).SOL;
const withdrawal = await ex.withdraw("SOL", 0.125, address);
check("withdraw (crypto)", withdrawal.id && withdrawal.amount === 0.125 && withdrawal.currency === "SOL", show(withdrawal));
const solAfter = (await ex.fetchBalance()).SOL;
check("withdrawal held", close(solAfter.used - solBefore.used, 0.125), `${show(solBefore)} -> ${show(solAfter)}`);
const withdrawals = await ex.fetchWithdrawals("SOL");
const w = withdrawals.filter((t) => t.id === withdrawal.id);
check("fetchWithdrawals", w.length === 1 && w[0].type === "withdrawal" && w[0].status === "pending"
  && close(w[0].amount + w[0].fee.cost, 0.125) && w[0].address === address && w[0].currency === "SOL"
  && withdrawals.every((t) => t.type === "withdrawal"), show(withdrawals));
const deposits = await ex.fetchDeposits("USD");
check("fetchDeposits", deposits.length >= 1 && deposits.every((t) => t.type === "deposit" && t.currency === "USD")
  && deposits.some((t) => t.status === "ok" && t.amount > 0), show(deposits));
const everything = await ex.fetchDepositsWithdrawals();
check("fetchDepositsWithdrawals", everything.some((t) => t.id === withdrawal.id)
  && new Set(everything.map((t) => t.type)).size === 2, show(everything.slice(0, 2)));

err = await raises(() => exchange({ secret: "bm90IHRoZSBzZWNyZXQ=" }).fetchBalance(), ccxt.AuthenticationError);
check("bad signature: AuthenticationError", err.includes("invalid signature"), err);
err = await raises(() => exchange({ password: "nope" }).fetchBalance(), ccxt.AuthenticationError);
check("wrong passphrase: AuthenticationError", err.includes("Invalid Passphrase"), err);
const viewer = exchange({ key: "sandbox-view-key" });
check("view-only key reads", (await viewer.fetchBalance()).USD.total > 0);
// ccxt maps a bare HTTP 403 to ExchangeNotAvailable (its table for every exchange); the body is the real one.
err = await raises(() => viewer.createOrder(SYMBOL, "limit", "buy", 0.001, price), ccxt.ExchangeNotAvailable);
check("view-only key trading: 403 Forbidden", err.includes('403 Forbidden {"message":"Forbidden"}'), err);
check("nothing placed by the view-only key", (await ex.fetchOpenOrders()).length === 0);
console.log("PASSED ccxt node");
