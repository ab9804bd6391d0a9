//! Coinbase Exchange (spec part E). Wire facts: `shared/api/coinbase-exchange.md`.
//!
//! Bodies are JSON; decimal amounts and prices travel as JSON strings, so they stay `Str` here.
//! Signing (`CB-ACCESS-*` headers) is the client's job, not the catalog's.
//!
//! Market data (products, their book, ticker, stats, trades and candles, currencies) is public:
//! those operations are sent without a key, as the exchange serves them.
//!
//! A few lists (`/accounts`, `/products`, `/currencies`, `/profiles`) return their whole array in
//! one response, so they have no paging.

use super::{BodyEncoding, Method, Operation, Paging, Param, Service};

const ACCOUNT: Param = Param::path("account_id", "account id (uuid)");
const ORDER: Param = Param::path("order_id", "order id, or client:<client_oid>");
const PRODUCT: Param = Param::path("product_id", "trading pair, e.g. BTC-USD");
const LIMIT: Param = Param::query("limit", "maximum records per page").int().range(1.0, 1000.0).default("100");
const BEFORE: Param = Param::query("before", "newer page: the CB-BEFORE cursor of a response");
const AFTER: Param = Param::query("after", "older page: the CB-AFTER cursor of a response");
const PROFILE_QUERY: Param = Param::query("profile_id", "profile id (empty: the key's profile)");
const PROFILE_BODY: Param = Param::body("profile_id", "profile id (empty: the key's profile)");
const START_DATE: Param = Param::query("start_date", "from this time, RFC 3339");
const END_DATE: Param = Param::query("end_date", "up to this time, RFC 3339");
const MARKET_TYPE: Param = Param::query("market_type", "market type").default("spot");
const PRODUCT_FILTER: Param = Param::query("product_id", "only this trading pair, e.g. BTC-USD");

const fn op(
    name: &'static str,
    resource: &'static str,
    method: Method,
    path: &'static str,
    summary: &'static str,
) -> Operation {
    Operation::base(Service::Coinbase, name, resource, method, path, summary)
}

pub(super) static OPERATIONS: &[Operation] = &[
    // accounts
    Operation {
        id_field: Some("id"),
        ..op(
            "accounts_list",
            "accounts",
            Method::Get,
            "/accounts",
            "trading accounts with balances and available funds",
        )
    },
    Operation {
        params: &[ACCOUNT],
        ..op("accounts_get", "accounts", Method::Get, "/accounts/{account_id}", "one account by id")
    },
    Operation {
        params: &[ACCOUNT, BEFORE, AFTER, LIMIT],
        paging: Paging::CursorHeaders,
        id_field: Some("id"),
        ..op(
            "accounts_get_holds",
            "accounts",
            Method::Get,
            "/accounts/{account_id}/holds",
            "holds on an account from open orders",
        )
    },
    Operation {
        params: &[
            ACCOUNT,
            Param::query("start_date", "from this date, RFC 3339 (no dates: last day only)"),
            END_DATE,
            BEFORE,
            AFTER,
            LIMIT,
            PROFILE_QUERY,
        ],
        paging: Paging::CursorHeaders,
        id_field: Some("id"),
        ..op(
            "accounts_get_ledger",
            "accounts",
            Method::Get,
            "/accounts/{account_id}/ledger",
            "transaction ledger of an account",
        )
    },
    // orders
    Operation {
        params: &[
            Param::query("status", "statuses, comma-separated (empty: open, pending and active)")
                .list()
                .one_of(&["open", "pending", "rejected", "done", "active", "received", "all"]),
            PRODUCT_FILTER,
            PROFILE_QUERY,
            Param::query("sortedBy", "sort field")
                .one_of(&["created_at", "price", "size", "order_id", "side", "type"])
                .default("created_at"),
            Param::query("sorting", "sort direction").one_of(&["asc", "desc"]).default("desc"),
            START_DATE,
            END_DATE,
            BEFORE,
            AFTER,
            LIMIT,
            MARKET_TYPE,
        ],
        paging: Paging::CursorHeaders,
        id_field: Some("id"),
        ..op("orders_list", "orders", Method::Get, "/orders", "open or all orders with optional filtering")
    },
    Operation {
        params: &[ORDER, MARKET_TYPE],
        ..op("orders_get", "orders", Method::Get, "/orders/{order_id}", "details of one order")
    },
    Operation {
        params: &[
            Param::body("product_id", "trading pair, e.g. BTC-USD").required(),
            Param::body("side", "buy or sell").required().one_of(&["buy", "sell"]),
            // A stop order is a limit order with `stop` and `stop_price`: the exchange answers
            // `Invalid order_type stop` to type stop (cbpro#368, bbgo#1932).
            Param::body("type", "order type (a stop order is a limit with stop and stop_price)")
                .one_of(&["limit", "market"])
                .default("limit"),
            Param::body("price", "decimal string in quote currency (limit and stop orders)"),
            Param::body("size", "decimal string in base currency (or give funds for market buys)"),
            Param::body("funds", "decimal string in quote currency to spend (market orders)"),
            Param::body("time_in_force", "good till cancelled/time, immediate or cancel, fill or kill")
                .one_of(&["GTC", "GTT", "IOC", "FOK"])
                .default("GTC"),
            Param::body("cancel_after", "lifetime of a GTT order").one_of(&["min", "hour", "day"]),
            Param::body("post_only", "reject instead of taking liquidity (not with IOC/FOK)")
                .boolean()
                .default("false"),
            Param::body("stp", "self-trade prevention: decrease and cancel, cancel oldest/newest/both")
                .one_of(&["dc", "co", "cn", "cb"])
                .default("dc"),
            Param::body("stop", "stop limit orders: loss (last <= stop_price) or entry (last >= stop_price)")
                .one_of(&["loss", "entry"]),
            Param::body("stop_price", "decimal string trigger price (stop orders)"),
            Param::body("stop_limit_price", "decimal string limit price of TP/SL orders"),
            Param::body("client_oid", "your uuid for the order, usable as client:<uuid>"),
            Param::body("max_floor", "decimal string visible size of an iceberg order"),
            PROFILE_BODY,
        ],
        body: BodyEncoding::Json,
        // An order spends funds (or sells them) as soon as it matches.
        spends: Some(|value| {
            let side = value("side").unwrap_or_else(|| "buy".into());
            let product = value("product_id").unwrap_or_default();
            // A market order's price, if the form still holds one, is not what it pays.
            let price = value("price").filter(|_| value("type").as_deref() != Some("market"));
            let order = crate::format::order_text(
                &side,
                &product,
                value("size").as_deref(),
                price.as_deref(),
                value("funds").as_deref(),
            );
            Some(format!("places an order: {order}"))
        }),
        ..op("orders_create", "orders", Method::Post, "/orders", "place a limit, market or stop order")
    },
    Operation {
        params: &[ORDER, Param::query("product_id", "trading pair of the order, e.g. BTC-USD"), PROFILE_QUERY],
        ..op("orders_cancel", "orders", Method::Delete, "/orders/{order_id}", "cancel one open order")
    },
    Operation {
        params: &[Param::query("product_id", "only orders of this pair (empty: every pair)"), PROFILE_QUERY],
        ..op(
            "orders_cancel_all",
            "orders",
            Method::Delete,
            "/orders",
            "cancel all open orders, optionally for one product",
        )
    },
    // fills
    Operation {
        params: &[
            Param::query("order_id", "fills of this order (give this or product_id)"),
            Param::query("product_id", "fills of this pair, e.g. BTC-USD (give this or order_id)"),
            LIMIT,
            Param::query("before", "newer page: trade_id cursor from CB-BEFORE"),
            Param::query("after", "older page: trade_id cursor from CB-AFTER"),
            Param::query("profile_id", "profile id").default("default"),
            MARKET_TYPE,
            START_DATE,
            END_DATE,
        ],
        paging: Paging::CursorHeaders,
        id_field: Some("trade_id"),
        at_least_one: &["order_id", "product_id"],
        ..op("fills_list", "fills", Method::Get, "/fills", "recent fills (executed trades), filtered")
    },
    // products
    Operation {
        public: true,
        params: &[Param::query("type", "only products of this type")],
        id_field: Some("id"),
        ..op("products_list", "products", Method::Get, "/products", "all trading pairs")
    },
    Operation {
        public: true,
        params: &[PRODUCT],
        ..op("products_get", "products", Method::Get, "/products/{product_id}", "details of one trading pair")
    },
    Operation {
        public: true,
        params: &[
            PRODUCT,
            Param::query("granularity", "bucket size in seconds")
                .int()
                .one_of(&["60", "300", "900", "3600", "21600", "86400"]),
            Param::query("start", "range start, ISO 8601 or epoch seconds"),
            Param::query("end", "range end, ISO 8601 or epoch seconds (at most 300 buckets)"),
        ],
        ..op(
            "products_get_candles",
            "products",
            Method::Get,
            "/products/{product_id}/candles",
            "historical candles: [time, low, high, open, close, volume]",
        )
    },
    Operation {
        public: true,
        params: &[
            PRODUCT,
            Param::query("level", "1: best bid/ask, 2: aggregated levels, 3: every order")
                .int()
                .one_of(&["1", "2", "3"])
                .default("1"),
        ],
        ..op("products_get_order_book", "products", Method::Get, "/products/{product_id}/book", "current order book")
    },
    Operation {
        public: true,
        params: &[PRODUCT],
        ..op("products_get_stats", "products", Method::Get, "/products/{product_id}/stats", "24-hour statistics")
    },
    Operation {
        public: true,
        params: &[PRODUCT],
        ..op("products_get_ticker", "products", Method::Get, "/products/{product_id}/ticker", "real-time ticker")
    },
    Operation {
        public: true,
        params: &[
            PRODUCT,
            LIMIT,
            Param::query("before", "newer page: trade_id cursor from CB-BEFORE"),
            Param::query("after", "older page: trade_id cursor from CB-AFTER"),
        ],
        paging: Paging::CursorHeaders,
        id_field: Some("trade_id"),
        ..op(
            "products_get_trades",
            "products",
            Method::Get,
            "/products/{product_id}/trades",
            "latest public trades, newest first",
        )
    },
    // transfers
    Operation {
        params: &[
            PROFILE_QUERY,
            BEFORE,
            AFTER,
            // The OpenAPI file says 30 and the docs page 100 (unconfirmed which); 100 matches
            // every other list of the exchange.
            LIMIT,
            Param::query("type", "kind of transfer").one_of(&[
                "deposit",
                "withdraw",
                "internal_deposit",
                "internal_withdraw",
            ]),
            Param::query("currency_type", "crypto or fiat").one_of(&["crypto", "fiat"]),
            Param::query("transfer_reason", "only this reason, e.g. usdc_reward"),
            Param::query("currency", "only this currency, e.g. USD"),
        ],
        paging: Paging::CursorHeaders,
        id_field: Some("id"),
        ..op("transfers_list", "transfers", Method::Get, "/transfers", "list deposits and withdrawals")
    },
    Operation {
        params: &[
            Param::body("amount", "decimal string amount to deposit").required(),
            Param::body("currency", "currency code, e.g. USDC").required(),
            Param::body("coinbase_account_id", "id of the Coinbase wallet to take it from").required(),
            PROFILE_BODY,
        ],
        body: BodyEncoding::Json,
        // The exchange has no generic deposit: this is the deposit from a Coinbase wallet
        // (`/deposits/payment-method` is the bank variant).
        ..op(
            "transfers_deposit",
            "transfers",
            Method::Post,
            "/deposits/coinbase-account",
            "deposit funds from a Coinbase wallet into the exchange",
        )
    },
    Operation {
        params: &[
            Param::body("amount", "decimal string amount to withdraw").required(),
            Param::body("currency", "currency code, e.g. BTC").required(),
            Param::body("crypto_address", "destination address on the chain").required(),
            Param::body("destination_tag", "memo or tag the destination needs"),
            Param::body("no_destination_tag", "true: the address needs no tag").boolean(),
            Param::body("network", "chain to send on, e.g. ethereum"),
            Param::body("add_network_fee_to_total", "true: the network fee comes on top of amount").boolean(),
            Param::body("nonce", "integer making a retried request idempotent").int(),
            Param::body("two_factor_code", "2FA code when the account asks for one"),
            Param::body("is_intermediary", "true: sent via an intermediary VASP").boolean(),
            Param::body("travel_rule_data", "travel-rule originator/beneficiary object").json(),
            PROFILE_BODY,
        ],
        body: BodyEncoding::Json,
        // Withdrawal to an external crypto address; `/withdrawals/coinbase-account` and
        // `/withdrawals/payment-method` are the other real variants.
        destructive: true,
        ..op(
            "transfers_withdraw",
            "transfers",
            Method::Post,
            "/withdrawals/crypto",
            "withdraw funds to an external crypto address",
        )
    },
    // conversions
    Operation {
        params: &[
            Param::body("from", "currency to convert from, e.g. USD").required(),
            Param::body("to", "currency to convert to, e.g. USDC").required(),
            Param::body("amount", "decimal string amount of the from currency").required(),
            PROFILE_BODY,
            Param::body("nonce", "client nonce making the request idempotent"),
        ],
        body: BodyEncoding::Json,
        ..op(
            "conversions_create",
            "conversions",
            Method::Post,
            "/conversions",
            "convert funds between two currencies (stablecoin pairs)",
        )
    },
    // profiles
    Operation {
        params: &[Param::query("active", "only active (true) or inactive (false) profiles").boolean()],
        id_field: Some("id"),
        ..op("profiles_list", "profiles", Method::Get, "/profiles", "trading profiles (portfolios)")
    },
    // currencies
    Operation {
        public: true,
        id_field: Some("id"),
        ..op("currencies_list", "currencies", Method::Get, "/currencies", "supported currencies")
    },
    // fees
    Operation { ..op("fees_get", "fees", Method::Get, "/fees", "current maker and taker fee rates and 30-day volume") },
];
