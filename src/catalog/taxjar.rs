//! TaxJar Sales Tax API v2 (spec part D). Wire facts: `shared/api/taxjar.md`.
//!
//! Nothing in v2 pages: lists carry `Paging::None`. The order, refund and customer lists answer
//! bare arrays of ids (`{"orders": ["123", ...]}`); their `id_field` names the id those strings
//! are. GET and DELETE take query parameters, POST and PUT a JSON body.

use super::{BodyEncoding, Method, Operation, Param, Service};

const TRANSACTION: Param = Param::path("transaction_id", "your id of the transaction");
const CUSTOMER: Param = Param::path("customer_id", "your id of the customer");
const PROVIDER: Param = Param::query("provider", "source: api, or a marketplace like amazon").default("api");

const LIST_DATE: Param = Param::query("transaction_date", "one day, YYYY/MM/DD (or give a range)");
const LIST_FROM: Param = Param::query("from_transaction_date", "range start, YYYY/MM/DD");
const LIST_TO: Param = Param::query("to_transaction_date", "range end, YYYY/MM/DD");

// Fields of order and refund bodies; creates mark the required ones.
const DATE: Param = Param::body("transaction_date", "date, YYYY-MM-DD or ISO 8601 with time and offset");
const BODY_PROVIDER: Param = Param::body("provider", "source: api, or a marketplace like amazon").default("api");
const FROM_COUNTRY: Param = Param::body("from_country", "origin country, ISO 2-letter");
const FROM_ZIP: Param = Param::body("from_zip", "origin postal code");
const FROM_STATE: Param = Param::body("from_state", "origin state code");
const FROM_CITY: Param = Param::body("from_city", "origin city");
const FROM_STREET: Param = Param::body("from_street", "origin street address");
const TO_COUNTRY: Param = Param::body("to_country", "destination country, ISO 2-letter");
const TO_ZIP: Param = Param::body("to_zip", "destination postal code, 5 digits or ZIP+4");
const TO_STATE: Param = Param::body("to_state", "destination state code");
const TO_CITY: Param = Param::body("to_city", "destination city");
const TO_STREET: Param = Param::body("to_street", "destination street address");
const AMOUNT: Param = Param::body("amount", "total including shipping, excluding sales tax").num();
const SHIPPING: Param = Param::body("shipping", "shipping charged").num();
const SALES_TAX: Param = Param::body("sales_tax", "sales tax collected").num();
const CUSTOMER_ID: Param = Param::body("customer_id", "customer whose exemption applies");
const EXEMPTION: Param = Param::body("exemption_type", "exemption; all but non_exempt need sales_tax 0").one_of(&[
    "wholesale",
    "government",
    "marketplace",
    "other",
    "non_exempt",
]);
const LINE_ITEMS: Param = Param::body(
    "line_items",
    "[{\"id\":\"1\",\"quantity\":1,\"product_tax_code\":\"20010\",\"unit_price\":15,\"discount\":0,\"sales_tax\":0.95}]",
)
.json()
        .template(r#"[{"id":"1","quantity":1,"product_tax_code":"","unit_price":0,"discount":0}]"#);
const REFERENCE: Param = Param::body("transaction_reference_id", "transaction_id of the refunded order");

// Fields of customer bodies.
const CUSTOMER_EXEMPTION: Param = Param::body("exemption_type", "exemption of the customer").one_of(&[
    "wholesale",
    "government",
    "other",
    "non_exempt",
]);
const CUSTOMER_NAME: Param = Param::body("name", "customer name");
const EXEMPT_REGIONS: Param =
    Param::body("exempt_regions", "[{\"country\":\"US\",\"state\":\"FL\"}] (none: everywhere)").json();
const COUNTRY: Param = Param::body("country", "country, ISO 2-letter");
const STATE: Param = Param::body("state", "state code");
const ZIP: Param = Param::body("zip", "postal code");
const CITY: Param = Param::body("city", "city");
const STREET: Param = Param::body("street", "street address");

const fn op(
    name: &'static str,
    resource: &'static str,
    method: Method,
    path: &'static str,
    summary: &'static str,
) -> Operation {
    Operation::base(Service::Taxjar, name, resource, method, path, summary)
}

pub(super) static OPERATIONS: &[Operation] = &[
    Operation {
        // Behaviour without any date is unconfirmed; the docs always give one.
        params: &[LIST_DATE, LIST_FROM, LIST_TO, PROVIDER],
        id_field: Some("transaction_id"),
        ..op("orders_list", "orders", Method::Get, "/v2/transactions/orders", "list ids of order transactions by date")
    },
    Operation {
        params: &[TRANSACTION, PROVIDER],
        ..op(
            "orders_get",
            "orders",
            Method::Get,
            "/v2/transactions/orders/{transaction_id}",
            "one order transaction by id",
        )
    },
    Operation {
        params: &[
            Param::body("transaction_id", "your unique id: letters, digits, _ and -").required(),
            DATE.required(),
            BODY_PROVIDER,
            FROM_COUNTRY,
            FROM_ZIP,
            FROM_STATE,
            FROM_CITY,
            FROM_STREET,
            TO_COUNTRY.required(),
            TO_ZIP.required(),
            TO_STATE.required(),
            TO_CITY,
            TO_STREET,
            AMOUNT.required(),
            SHIPPING.required(),
            SALES_TAX.required(),
            CUSTOMER_ID,
            EXEMPTION,
            LINE_ITEMS,
        ],
        body: BodyEncoding::Json,
        ..op(
            "orders_create",
            "orders",
            Method::Post,
            "/v2/transactions/orders",
            "record an order transaction for reporting",
        )
    },
    Operation {
        // The SDKs repeat `transaction_id` in the body; the Python SDK sends whatever it is given,
        // so the id in the URL is taken as sufficient.
        params: &[
            TRANSACTION,
            DATE,
            BODY_PROVIDER,
            FROM_COUNTRY,
            FROM_ZIP,
            FROM_STATE,
            FROM_CITY,
            FROM_STREET,
            TO_COUNTRY,
            TO_ZIP,
            TO_STATE,
            TO_CITY,
            TO_STREET,
            AMOUNT,
            SHIPPING,
            SALES_TAX,
            CUSTOMER_ID,
            EXEMPTION,
            LINE_ITEMS,
        ],
        body: BodyEncoding::Json,
        ..op(
            "orders_update",
            "orders",
            Method::Put,
            "/v2/transactions/orders/{transaction_id}",
            "update an order transaction",
        )
    },
    Operation {
        params: &[TRANSACTION, PROVIDER],
        ..op(
            "orders_delete",
            "orders",
            Method::Delete,
            "/v2/transactions/orders/{transaction_id}",
            "delete an order transaction",
        )
    },
    Operation {
        params: &[LIST_DATE, LIST_FROM, LIST_TO, PROVIDER],
        id_field: Some("transaction_id"),
        ..op(
            "refunds_list",
            "refunds",
            Method::Get,
            "/v2/transactions/refunds",
            "list ids of refund transactions by date",
        )
    },
    Operation {
        params: &[TRANSACTION, PROVIDER],
        ..op(
            "refunds_get",
            "refunds",
            Method::Get,
            "/v2/transactions/refunds/{transaction_id}",
            "one refund transaction by id",
        )
    },
    Operation {
        params: &[
            Param::body("transaction_id", "your unique id, different from the order's").required(),
            REFERENCE.required(),
            DATE.required(),
            BODY_PROVIDER,
            FROM_COUNTRY,
            FROM_ZIP,
            FROM_STATE,
            FROM_CITY,
            FROM_STREET,
            TO_COUNTRY.required(),
            TO_ZIP.required(),
            TO_STATE.required(),
            TO_CITY,
            TO_STREET,
            AMOUNT.required(),
            SHIPPING.required(),
            SALES_TAX.required(),
            CUSTOMER_ID,
            EXEMPTION,
            LINE_ITEMS,
        ],
        // Records a refund for reporting; no money moves, so it does not ask first.
        body: BodyEncoding::Json,
        ..op(
            "refunds_create",
            "refunds",
            Method::Post,
            "/v2/transactions/refunds",
            "record a refund transaction for reporting",
        )
    },
    Operation {
        // As for orders_update, the id travels in the URL only.
        params: &[
            TRANSACTION,
            REFERENCE.required(),
            DATE,
            BODY_PROVIDER,
            FROM_COUNTRY,
            FROM_ZIP,
            FROM_STATE,
            FROM_CITY,
            FROM_STREET,
            TO_COUNTRY,
            TO_ZIP,
            TO_STATE,
            TO_CITY,
            TO_STREET,
            AMOUNT,
            SHIPPING,
            SALES_TAX,
            CUSTOMER_ID,
            EXEMPTION,
            LINE_ITEMS,
        ],
        body: BodyEncoding::Json,
        ..op(
            "refunds_update",
            "refunds",
            Method::Put,
            "/v2/transactions/refunds/{transaction_id}",
            "update a refund transaction",
        )
    },
    Operation {
        params: &[TRANSACTION, PROVIDER],
        ..op(
            "refunds_delete",
            "refunds",
            Method::Delete,
            "/v2/transactions/refunds/{transaction_id}",
            "delete a refund transaction",
        )
    },
    Operation {
        id_field: Some("customer_id"),
        ..op("customers_list", "customers", Method::Get, "/v2/customers", "list ids of customers")
    },
    Operation {
        params: &[CUSTOMER],
        ..op(
            "customers_get",
            "customers",
            Method::Get,
            "/v2/customers/{customer_id}",
            "one customer with exemption details",
        )
    },
    Operation {
        params: &[
            Param::body("customer_id", "your unique id of the customer").required(),
            CUSTOMER_EXEMPTION.required(),
            CUSTOMER_NAME.required(),
            EXEMPT_REGIONS,
            COUNTRY,
            STATE,
            ZIP,
            CITY,
            STREET,
        ],
        body: BodyEncoding::Json,
        ..op("customers_create", "customers", Method::Post, "/v2/customers", "create a customer with exemption details")
    },
    Operation {
        // The update replaces the customer: exemption_type and name are required again. The id
        // travels in the URL only, as for orders_update.
        params: &[
            CUSTOMER,
            CUSTOMER_EXEMPTION.required(),
            CUSTOMER_NAME.required(),
            EXEMPT_REGIONS,
            COUNTRY,
            STATE,
            ZIP,
            CITY,
            STREET,
        ],
        body: BodyEncoding::Json,
        ..op(
            "customers_update",
            "customers",
            Method::Put,
            "/v2/customers/{customer_id}",
            "replace a customer's details",
        )
    },
    Operation {
        params: &[CUSTOMER],
        ..op("customers_delete", "customers", Method::Delete, "/v2/customers/{customer_id}", "delete a customer")
    },
    Operation {
        id_field: Some("region_code"),
        ..op(
            "nexus_list",
            "nexus regions",
            Method::Get,
            "/v2/nexus/regions",
            "list the regions where the account has nexus",
        )
    },
    Operation {
        id_field: Some("product_tax_code"),
        ..op(
            "categories_list",
            "categories",
            Method::Get,
            "/v2/categories",
            "list product tax categories with their tax codes",
        )
    },
    Operation {
        // The docs say "all regions", the spec "regions with nexus"; no parameter either way.
        id_field: Some("region_code"),
        ..op(
            "summary_rates_list",
            "summary rates",
            Method::Get,
            "/v2/summary_rates",
            "minimum and average rates per region",
        )
    },
    Operation {
        params: &[
            Param::path("zip", "postal code, e.g. 90404 or 05495-2086"),
            Param::query("country", "ISO 2-letter country; required outside the US"),
            Param::query("state", "state code"),
            Param::query("city", "city"),
            Param::query("street", "street address, for a more precise rate"),
        ],
        ..op("rates_get", "rates", Method::Get, "/v2/rates/{zip}", "combined tax rate of a location")
    },
    Operation {
        params: &[
            FROM_COUNTRY,
            FROM_ZIP,
            FROM_STATE,
            FROM_CITY,
            FROM_STREET,
            TO_COUNTRY.required(),
            Param::body("to_zip", "destination postal code; required for the US"),
            Param::body("to_state", "destination state code; required for the US and CA"),
            TO_CITY,
            TO_STREET,
            Param::body("amount", "order total excluding shipping (or give line_items)").num(),
            SHIPPING.required(),
            CUSTOMER_ID,
            EXEMPTION,
            Param::body("nexus_addresses", "[{\"id\":\"Main\",\"country\":\"US\",\"zip\":\"92093\",\"state\":\"CA\"}]")
                .json(),
            Param::body(
                "line_items",
                "[{\"id\":\"1\",\"quantity\":1,\"product_tax_code\":\"20010\",\"unit_price\":15,\"discount\":0}]",
            )
            .json()
            .template(r#"[{"id":"1","quantity":1,"product_tax_code":"","unit_price":0,"discount":0}]"#),
        ],
        body: BodyEncoding::Json,
        mutates: false,
        ..op("taxes_calculate", "taxes", Method::Post, "/v2/taxes", "calculate the sales tax of an order")
    },
    Operation {
        params: &[
            Param::body("country", "US only").one_of(&["US"]).default("US"),
            Param::body("state", "state code"),
            Param::body("zip", "postal code"),
            Param::body("city", "city"),
            Param::body("street", "street address"),
        ],
        body: BodyEncoding::Json,
        mutates: false,
        ..op(
            "addresses_validate",
            "addresses",
            Method::Post,
            "/v2/addresses/validate",
            "validate a US address (404 when nothing matches)",
        )
    },
    Operation {
        params: &[Param::query("vat", "VAT number with country prefix, e.g. FR40303265045").required()],
        ..op(
            "validations_validate",
            "vat validations",
            Method::Get,
            "/v2/validation",
            "validate a VAT identification number",
        )
    },
];
