//! EasyPost (spec part G). Wire facts: `shared/api/easypost.md`.
//!
//! Bodies are JSON. Create calls wrap the record under its name (`{"shipment": {...}}`), so the
//! wrapper is one JSON body field holding the nested object; action calls (buy, label, batch
//! membership, webhook update) send plain top-level fields.

use super::{BodyEncoding, Method, Operation, Paging, Param, Service};

const PAGE_SIZE: Param = Param::query("page_size", "records per page").int().range(1.0, 100.0).default("20");
const BEFORE_ID: Param = Param::query("before_id", "only records older than this id (next page)");
const AFTER_ID: Param = Param::query("after_id", "only records newer than this id");
const START: Param = Param::query("start_datetime", "created at or after, ISO 8601");
const END: Param = Param::query("end_datetime", "created before, ISO 8601");
const ADDRESS_ID: Param = Param::path("id", "address id (adr_...)");
const PARCEL_ID: Param = Param::path("id", "parcel id (prcl_...)");
const SHIPMENT_ID: Param = Param::path("id", "shipment id (shp_...)");
const BATCH_ID: Param = Param::path("id", "batch id (batch_...)");
const INSURANCE_ID: Param = Param::path("id", "insurance id (ins_...)");
const REFUND_ID: Param = Param::path("id", "refund id (rfnd_...)");
const TRACKER_ID: Param = Param::path("id", "tracker id (trk_...)");
const WEBHOOK_ID: Param = Param::path("id", "webhook id (hook_...)");
const ADDRESS: Param =
    Param::body("address", "{\"name\":..,\"street1\":..,\"city\":..,\"state\":..,\"zip\":..,\"country\":\"US\"}")
        .json()
        .template(r#"{"name":"","street1":"","city":"","state":"","zip":"","country":"US"}"#)
        .required();
const VERIFY_CARRIER: Param = Param::body("verify_carrier", "carrier to verify with, e.g. USPS");
const BATCH_SHIPMENTS: Param =
    Param::body("shipments", "[{\"id\":\"shp_...\"},...]").json().template(r#"[{"id":""}]"#).required();
const CUSTOM_HEADERS: Param =
    Param::body("custom_headers", "headers added to each POST: [{\"name\":\"X-Key\",\"value\":\"v\"}]").json();

const fn op(
    name: &'static str,
    resource: &'static str,
    method: Method,
    path: &'static str,
    summary: &'static str,
) -> Operation {
    Operation::base(Service::Easypost, name, resource, method, path, summary)
}

pub(super) static OPERATIONS: &[Operation] = &[
    // shipments
    Operation {
        params: &[
            PAGE_SIZE,
            BEFORE_ID,
            AFTER_ID,
            START,
            END,
            Param::query("purchased", "false: also shipments without a label").boolean().default("true"),
            Param::query("include_children", "include child-user shipments").boolean().default("false"),
        ],
        paging: Paging::HasMore,
        id_field: Some("id"),
        // The browser lists shipments still to buy too, not only bought ones (the API's default).
        browse: &[("purchased", "false")],
        ..op(
            "shipments_list",
            "shipments",
            Method::Get,
            "/v2/shipments",
            "all shipments with pagination and date filters",
        )
    },
    Operation {
        params: &[SHIPMENT_ID],
        ..op("shipments_get", "shipments", Method::Get, "/v2/shipments/{id}", "shipment by id")
    },
    Operation {
        params: &[Param::body(
            "shipment",
            "{\"to_address\":{..},\"from_address\":{..},\"parcel\":{..}}; ids as {\"id\":..}",
        )
        .json()
        .template(r#"{"to_address":{"name":"","street1":"","city":"","state":"","zip":"","country":"US"},"from_address":{"name":"","street1":"","city":"","state":"","zip":"","country":"US"},"parcel":{"length":0,"width":0,"height":0,"weight":0}}"#)
        .required()],
        body: BodyEncoding::Json,
        // With a carrier and a service, EasyPost buys the label in the same call.
        spends: Some(|value| {
            let shipment: serde_json::Value = serde_json::from_str(&value("shipment")?).ok()?;
            let given = |key: &str| shipment.get(key).and_then(serde_json::Value::as_str).filter(|s| !s.is_empty());
            let (carrier, service) = (given("carrier")?, given("service")?);
            Some(format!("buys postage in the same call: {carrier} {service}"))
        }),
        ..op(
            "shipments_create",
            "shipments",
            Method::Post,
            "/v2/shipments",
            "create a shipment from addresses and a parcel; rates are generated",
        )
    },
    Operation {
        params: &[
            SHIPMENT_ID,
            Param::body("rate", "the chosen rate: {\"id\":\"rate_...\"}").json()
        .template(r#"{"id":""}"#).required(),
            Param::body("insurance", "insured value in USD, decimal string, e.g. 100.00"),
            Param::body("end_shipper_id", "end shipper id (es_...) where the carrier needs one"),
        ],
        body: BodyEncoding::Json,
        // Money-moving: it asks first, restating what it buys.
        destructive: true,
        ..op(
            "shipments_buy",
            "shipments",
            Method::Post,
            "/v2/shipments/{id}/buy",
            "buy a shipment with a selected rate, producing its label",
        )
    },
    Operation {
        params: &[
            SHIPMENT_ID,
            Param::query("file_format", "label format to convert to").required().one_of(&["PDF", "ZPL", "EPL2", "PNG"]),
        ],
        ..op(
            "shipments_label",
            "shipments",
            Method::Get,
            "/v2/shipments/{id}/label",
            "convert a bought label to another format",
        )
    },
    // addresses
    Operation {
        params: &[PAGE_SIZE, BEFORE_ID, AFTER_ID, START, END],
        paging: Paging::HasMore,
        id_field: Some("id"),
        ..op("addresses_list", "addresses", Method::Get, "/v2/addresses", "all addresses, paginated")
    },
    Operation {
        params: &[ADDRESS_ID],
        ..op("addresses_get", "addresses", Method::Get, "/v2/addresses/{id}", "address by id")
    },
    Operation {
        params: &[
            ADDRESS,
            Param::body("verify", "true or [\"delivery\",\"zip4\"]; failures show in verifications").json(),
            Param::body("verify_strict", "true or [\"delivery\"]; a failed check rejects the request").json(),
            VERIFY_CARRIER,
        ],
        body: BodyEncoding::Json,
        ..op("addresses_create", "addresses", Method::Post, "/v2/addresses", "create an address")
    },
    Operation {
        params: &[ADDRESS, VERIFY_CARRIER],
        body: BodyEncoding::Json,
        ..op(
            "addresses_create_and_verify",
            "addresses",
            Method::Post,
            "/v2/addresses/create_and_verify",
            "create and verify an address in one request",
        )
    },
    Operation {
        params: &[ADDRESS_ID],
        // A GET: the verified address comes back as a new record; the original is unchanged.
        ..op(
            "addresses_verify",
            "addresses",
            Method::Get,
            "/v2/addresses/{id}/verify",
            "verify an existing address by id",
        )
    },
    // parcels
    Operation { params: &[PARCEL_ID], ..op("parcels_get", "parcels", Method::Get, "/v2/parcels/{id}", "parcel by id") },
    Operation {
        params: &[Param::body("parcel", "inches and ounces: {\"length\":10,\"width\":8,\"height\":4,\"weight\":15.4}")
            .json()
        .template(r#"{"length":0,"width":0,"height":0,"weight":0}"#)
            .required()],
        body: BodyEncoding::Json,
        ..op("parcels_create", "parcels", Method::Post, "/v2/parcels", "create a parcel with dimensions and weight")
    },
    // batches
    Operation {
        // The spec gives no maximum page size for batches (the docs cap every list at 100).
        params: &[
            Param::query("page_size", "records per page").int().min(1.0).default("20"),
            BEFORE_ID,
            AFTER_ID,
            START,
            END,
        ],
        paging: Paging::HasMore,
        id_field: Some("id"),
        ..op("batches_list", "batches", Method::Get, "/v2/batches", "all batches, paginated")
    },
    Operation { params: &[BATCH_ID], ..op("batches_get", "batches", Method::Get, "/v2/batches/{id}", "batch by id") },
    Operation {
        params: &[Param::body(
            "batch",
            "{\"shipments\":[{\"id\":\"shp_...\"}],\"reference\":\"...\"} or {} for an empty one",
        )
        .json()
        .template(r#"{"shipments":[{"id":""}],"reference":""}"#)
        .required()],
        body: BodyEncoding::Json,
        ..op("batches_create", "batches", Method::Post, "/v2/batches", "create a batch")
    },
    Operation {
        params: &[BATCH_ID, BATCH_SHIPMENTS],
        body: BodyEncoding::Json,
        ..op(
            "batches_add_shipments",
            "batches",
            Method::Post,
            "/v2/batches/{id}/add_shipments",
            "add shipments to a batch",
        )
    },
    Operation {
        params: &[BATCH_ID, BATCH_SHIPMENTS],
        body: BodyEncoding::Json,
        destructive: true,
        ..op(
            "batches_remove_shipments",
            "batches",
            Method::Post,
            "/v2/batches/{id}/remove_shipments",
            "remove shipments from a batch",
        )
    },
    Operation {
        params: &[BATCH_ID],
        // Sent as an empty JSON object.
        body: BodyEncoding::Json,
        // Money-moving: it asks first, restating what it buys.
        destructive: true,
        ..op(
            "batches_buy",
            "batches",
            Method::Post,
            "/v2/batches/{id}/buy",
            "buy postage for every shipment of a batch",
        )
    },
    Operation {
        params: &[
            BATCH_ID,
            Param::body("file_format", "format of the merged label file").required().one_of(&["PDF", "ZPL", "EPL2"]),
        ],
        body: BodyEncoding::Json,
        ..op("batches_label", "batches", Method::Post, "/v2/batches/{id}/label", "generate one consolidated label file")
    },
    Operation {
        params: &[
            BATCH_ID,
            // Whether the scan form accepts a file format is unconfirmed; usually sent as {}.
            Param::body("file_format", "scan form file format (usually left empty)"),
        ],
        body: BodyEncoding::Json,
        ..op(
            "batches_scan_form",
            "batches",
            Method::Post,
            "/v2/batches/{id}/scan_form",
            "create a scan form for a batch",
        )
    },
    // trackers
    Operation {
        params: &[
            PAGE_SIZE,
            BEFORE_ID,
            AFTER_ID,
            START,
            END,
            Param::query("tracking_code", "only trackers of this tracking code"),
            Param::query("carrier", "only trackers of this carrier, e.g. USPS"),
        ],
        paging: Paging::HasMore,
        id_field: Some("id"),
        ..op("trackers_list", "trackers", Method::Get, "/v2/trackers", "all trackers, paginated")
    },
    Operation {
        params: &[TRACKER_ID],
        ..op("trackers_get", "trackers", Method::Get, "/v2/trackers/{id}", "tracker by id")
    },
    Operation {
        params: &[Param::body(
            "tracker",
            "{\"tracking_code\":\"EZ1000000001\",\"carrier\":\"USPS\"} (carrier optional)",
        )
        .json()
        .template(r#"{"tracking_code":"","carrier":""}"#)
        .required()],
        body: BodyEncoding::Json,
        ..op(
            "trackers_create",
            "trackers",
            Method::Post,
            "/v2/trackers",
            "track a package (an existing tracker is returned for a known code)",
        )
    },
    // insurances
    Operation {
        params: &[PAGE_SIZE, BEFORE_ID, AFTER_ID, START, END],
        paging: Paging::HasMore,
        id_field: Some("id"),
        ..op("insurance_list", "insurances", Method::Get, "/v2/insurances", "all insurance records, paginated")
    },
    Operation {
        params: &[INSURANCE_ID],
        ..op("insurance_get", "insurances", Method::Get, "/v2/insurances/{id}", "insurance by id")
    },
    Operation {
        params: &[Param::body(
            "insurance",
            "{\"tracking_code\":..,\"carrier\":..,\"amount\":\"100.00\",\"to_address\":{..},\"from_address\":{..}}",
        )
        .json()
        .template(r#"{"tracking_code":"","carrier":"","amount":"","to_address":{"id":""},"from_address":{"id":""}}"#)
        .required()],
        body: BodyEncoding::Json,
        // Money-moving: it asks first, restating what it buys.
        destructive: true,
        ..op(
            "insurance_create",
            "insurances",
            Method::Post,
            "/v2/insurances",
            "buy standalone insurance for a package (amount in USD, max 5000)",
        )
    },
    Operation {
        params: &[INSURANCE_ID],
        // Sent as an empty JSON object.
        body: BodyEncoding::Json,
        destructive: true,
        ..op(
            "insurance_refund",
            "insurances",
            Method::Post,
            "/v2/insurances/{id}/refund",
            "refund eligible standalone insurance",
        )
    },
    // refunds
    Operation {
        params: &[PAGE_SIZE, BEFORE_ID, AFTER_ID, START, END],
        paging: Paging::HasMore,
        id_field: Some("id"),
        ..op("refunds_list", "refunds", Method::Get, "/v2/refunds", "all refunds, paginated")
    },
    Operation { params: &[REFUND_ID], ..op("refunds_get", "refunds", Method::Get, "/v2/refunds/{id}", "refund by id") },
    Operation {
        params: &[Param::body("refund", "{\"carrier\":\"USPS\",\"tracking_codes\":[\"...\"]} (a list even for one)")
            .json()
        .template(r#"{"carrier":"","tracking_codes":[""]}"#)
            .required()],
        body: BodyEncoding::Json,
        destructive: true,
        ..op("refunds_create", "refunds", Method::Post, "/v2/refunds", "request refunds for one or more shipments")
    },
    // webhooks
    Operation {
        params: &[PAGE_SIZE],
        // Returned without has_more, so the client stops after one page.
        paging: Paging::HasMore,
        id_field: Some("id"),
        ..op("webhooks_list", "webhooks", Method::Get, "/v2/webhooks", "all webhooks")
    },
    Operation {
        params: &[WEBHOOK_ID],
        ..op("webhooks_get", "webhooks", Method::Get, "/v2/webhooks/{id}", "webhook by id")
    },
    Operation {
        params: &[Param::body(
            "webhook",
            "{\"url\":\"https://...\",\"webhook_secret\":\"...\",\"custom_headers\":[..]}",
        )
        .json()
        .template(r#"{"url":"","webhook_secret":""}"#)
        .required()],
        body: BodyEncoding::Json,
        ..op(
            "webhooks_create",
            "webhooks",
            Method::Post,
            "/v2/webhooks",
            "create a webhook endpoint for event notifications",
        )
    },
    Operation {
        params: &[
            WEBHOOK_ID,
            // Changing the URL with PATCH is unconfirmed in the reference.
            Param::body("url", "new endpoint URL"),
            Param::body("webhook_secret", "secret for the X-Hmac-Signature header"),
            CUSTOM_HEADERS,
        ],
        body: BodyEncoding::Json,
        ..op(
            "webhooks_update",
            "webhooks",
            Method::Patch,
            "/v2/webhooks/{id}",
            "update a webhook's URL, secret or headers; re-enables it",
        )
    },
    Operation {
        params: &[WEBHOOK_ID],
        ..op("webhooks_delete", "webhooks", Method::Delete, "/v2/webhooks/{id}", "delete a webhook")
    },
];
