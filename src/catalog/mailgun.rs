//! Mailgun (spec part F). Wire facts: `shared/api/mailgun.md`.
//!
//! Writes are form-encoded; sending is multipart so files can ride along. The US/EU host is
//! chosen by the client from the profile, so paths here are host-relative.
//!
//! Paging comes in two shapes. Suppressions, events and the `/pages` list endpoints return
//! `paging.next` URLs (`Paging::PagingUrl`). Domains and routes page by `skip`/`limit` offsets
//! (`Paging::SkipLimit`).
//!
//! Every domain-scoped path names its domain `{domain}` (the reference writes `{name}` for the
//! domain endpoints), so one `domain=...` works across the service.

use super::{BodyEncoding, Family, Method, Operation, Paging, Param, Service};

const DOMAIN: Param = Param::path("domain", "sending domain, e.g. mg.example.com");
const ADDRESS: Param = Param::path("address", "email address, e.g. alice@example.com");
const LIST: Param = Param::path("list_address", "mailing list address, e.g. dev@mg.example.com");
const ROUTE: Param = Param::path("id", "route id (24 hex characters)");
const WEBHOOK_NAMES: &[&str] =
    &["accepted", "delivered", "opened", "clicked", "unsubscribed", "complained", "permanent_fail", "temporary_fail"];
const WEBHOOK: Param = Param::path("id", "webhook name, e.g. delivered").one_of(WEBHOOK_NAMES);
const WEBHOOK_URLS: Param = Param::body("url", "up to 3 URLs to POST events to (comma-separated)").list().required();
const SUPPRESSION_LIMIT: Param =
    Param::query("limit", "maximum records per page").int().range(1.0, 1000.0).default("100");
const SUPPRESSION_PAGE: Param =
    Param::query("page", "which page, relative to address").one_of(&["first", "last", "next", "previous"]);
const PIVOT: Param = Param::query("address", "page pivot: the address to page from");
const TERM: Param = Param::query("term", "only addresses starting with this");
const CREATED_AT: Param = Param::body("created_at", "RFC 2822 time, e.g. Thu, 13 Oct 2011 18:02:00 GMT (empty: now)");
const ACCESS_LEVEL: Param = Param::body("access_level", "who may post to the list")
    .one_of(&["readonly", "members", "everyone"])
    .default("readonly");
const REPLY_PREFERENCE: Param =
    Param::body("reply_preference", "where replies go").one_of(&["list", "sender"]).default("list");
const YES_NO: &[&str] = &["yes", "no"];
const TAGS: Param = Param::body("o:tag", "tags for analytics, at most 3 (repeat o:tag= or comma-separate)").list();
const HEADERS: Param =
    Param::family("h:", Family::HeaderName, "custom MIME header, e.g. h:X-Ticket=42 (any number of them)");
const VARIABLES: Param = Param::family(
    "v:",
    Family::VariableName,
    "custom variable, e.g. v:order-id=1234: in events as user-variables (any number of them)",
);
/// The largest message Mailgun takes (attachments included), in bytes.
const MAX_MESSAGE_BYTES: u64 = 25 * 1024 * 1024;
const TESTMODE: Param = Param::body("o:testmode", "yes: accepted but not delivered").one_of(YES_NO);
const DELIVERYTIME: Param = Param::body("o:deliverytime", "schedule: RFC 2822 time, at most 3 days ahead");
const TRACKING: Param = Param::body("o:tracking", "track opens and clicks").one_of(YES_NO);
const TRACKING_CLICKS: Param = Param::body("o:tracking-clicks", "track clicks").one_of(&["yes", "no", "htmlonly"]);
const TRACKING_OPENS: Param = Param::body("o:tracking-opens", "track opens").one_of(YES_NO);
const DKIM: Param = Param::body("o:dkim", "sign with DKIM").one_of(YES_NO);
const REQUIRE_TLS: Param = Param::body("o:require-tls", "yes: fail unless delivered over TLS").one_of(YES_NO);
const SKIP_VERIFICATION: Param =
    Param::body("o:skip-verification", "yes: do not verify the receiving server's certificate").one_of(YES_NO);
const RECIPIENT_VARIABLES: Param =
    Param::body("recipient-variables", "batch sending: {\"bob@x.com\":{\"first\":\"Bob\"},...}").json();
const TEMPLATE: Param = Param::body("template", "name of a stored template");

const fn op(
    name: &'static str,
    resource: &'static str,
    method: Method,
    path: &'static str,
    summary: &'static str,
) -> Operation {
    Operation::base(Service::Mailgun, name, resource, method, path, summary)
}

pub(super) static OPERATIONS: &[Operation] = &[
    // domains
    Operation {
        params: &[
            Param::query("limit", "maximum domains returned").int().range(1.0, 1000.0).default("100"),
            Param::query("skip", "number of domains to skip").int().min(0.0).default("0"),
            Param::query("state", "only domains in this state").one_of(&["active", "unverified", "disabled"]),
            Param::query("authority", "only domains with this DKIM authority"),
        ],
        paging: Paging::SkipLimit,
        id_field: Some("name"),
        ..op("domains_list", "domains", Method::Get, "/v3/domains", "all domains of the account")
    },
    Operation {
        params: &[DOMAIN],
        ..op("domains_get", "domains", Method::Get, "/v3/domains/{domain}", "one domain with its DNS records")
    },
    Operation {
        params: &[
            Param::body("name", "domain name, e.g. mg.example.com").required(),
            Param::body("smtp_password", "password for postmaster@<domain>").range(5.0, 32.0),
            Param::body("spam_action", "what to do with spam")
                .one_of(&["disabled", "block", "tag"])
                .default("disabled"),
            Param::body("wildcard", "accept mail for subdomains too").boolean().default("false"),
            Param::body("force_dkim_authority", "true: this domain is its own DKIM authority").boolean(),
            Param::body("dkim_key_size", "DKIM key length in bits").one_of(&["1024", "2048"]),
            Param::body("ips", "dedicated IPs to send from (comma-separated)").list(),
            Param::body("pool_id", "IP pool to send from"),
            Param::body("web_scheme", "scheme of tracking links").one_of(&["http", "https"]).default("http"),
            Param::body("web_prefix", "subdomain of tracking links").default("email"),
        ],
        body: BodyEncoding::Form,
        ..op("domains_create", "domains", Method::Post, "/v3/domains", "create a sending domain")
    },
    Operation {
        params: &[DOMAIN],
        ..op(
            "domains_verify",
            "domains",
            Method::Put,
            "/v3/domains/{domain}/verify",
            "re-check the DNS records of a domain",
        )
    },
    Operation {
        params: &[DOMAIN],
        ..op(
            "domains_delete",
            "domains",
            Method::Delete,
            "/v3/domains/{domain}",
            "delete a domain (sandbox domains cannot be deleted)",
        )
    },
    // events
    Operation {
        params: &[
            DOMAIN,
            Param::query("begin", "start time: RFC 2822 or epoch seconds"),
            Param::query("end", "end time: RFC 2822 or epoch seconds"),
            Param::query("ascending", "yes: oldest first").one_of(YES_NO),
            // The default page size is not documented (unconfirmed); 300 is the stated maximum.
            Param::query("limit", "maximum events per page").int().range(1.0, 300.0),
            Param::query("event", "event type, e.g. delivered, failed, opened (comma-separated)").list(),
            Param::query("recipient", "only events for this recipient address"),
            Param::query("recipients", "only events with this address among recipients"),
            Param::query("from", "only messages from this address"),
            Param::query("to", "only messages with this To header"),
            Param::query("subject", "only messages with this subject"),
            Param::query("message-id", "only this Message-Id (without <>)"),
            Param::query("tags", "only messages with this tag"),
            Param::query("list", "only messages to this mailing list address"),
            Param::query("attachment", "only messages with an attachment of this name"),
            Param::query("size", "message size in bytes, e.g. >10000"),
            Param::query("severity", "failed events: permanent or temporary").one_of(&["permanent", "temporary"]),
        ],
        paging: Paging::PagingUrl,
        id_field: Some("id"),
        ..op(
            "events_list",
            "events",
            Method::Get,
            "/v3/{domain}/events",
            "query the event log: deliveries, opens, clicks, bounces, failures",
        )
    },
    // messages
    Operation {
        params: &[
            DOMAIN,
            Param::body("from", "sender, e.g. Name <a@mg.example.com>").required(),
            Param::body("to", "recipients, at most 1000 in total (repeat to= or comma-separate)").list().required(),
            Param::body("cc", "copy recipients (repeat cc= or comma-separate)").list(),
            Param::body("bcc", "blind copy recipients (repeat bcc= or comma-separate)").list(),
            Param::body("subject", "subject line").required(),
            Param::body("text", "plain-text body"),
            Param::body("html", "HTML body (not with template)"),
            // What a person composing fills in first; template and delivery options follow.
            Param::body("attachment", "file to attach: attachment=@invoice.pdf (repeat for more)").file(),
            Param::body("inline", "inline image file, referenced as cid:<file name> (repeat for more)").file(),
            TAGS,
            Param::body("h:Reply-To", "Reply-To header"),
            HEADERS,
            VARIABLES,
            Param::body("amp-html", "AMP HTML body"),
            TEMPLATE,
            Param::body("t:version", "template version (empty: the active one)"),
            Param::body("t:text", "yes: also render a text part from the template").one_of(YES_NO),
            Param::body("t:variables", "template variables object").json(),
            DKIM,
            TESTMODE,
            TRACKING,
            TRACKING_CLICKS,
            TRACKING_OPENS,
            REQUIRE_TLS,
            SKIP_VERIFICATION,
            DELIVERYTIME,
            Param::body("o:deliverytime-optimize-period", "send-time optimisation window, e.g. 24h"),
            Param::body("o:time-zone-localize", "deliver at this local time, e.g. 09:00"),
            Param::body("o:sending-ip", "dedicated IP to send from"),
            Param::body("o:sending-ip-pool", "IP pool id to send from"),
            Param::body("o:archive-to", "URL to POST a copy of the message to"),
            RECIPIENT_VARIABLES,
        ],
        body: BodyEncoding::Multipart,
        max_file_bytes: Some(MAX_MESSAGE_BYTES),
        // Mail once sent cannot be called back: on a live service it asks first, like a delete.
        destructive: true,
        ..op("messages_send", "messages", Method::Post, "/v3/{domain}/messages", "send an email message")
    },
    Operation {
        params: &[
            DOMAIN,
            Param::body("to", "envelope recipients (repeat to= or comma-separate)").list().required(),
            Param::body("message", "file holding the full MIME message: message=@mail.eml").file().single().required(),
            TEMPLATE,
            TAGS,
            DKIM,
            TESTMODE,
            TRACKING,
            TRACKING_CLICKS,
            TRACKING_OPENS,
            REQUIRE_TLS,
            DELIVERYTIME,
            HEADERS,
            VARIABLES,
            RECIPIENT_VARIABLES,
        ],
        body: BodyEncoding::Multipart,
        max_file_bytes: Some(MAX_MESSAGE_BYTES),
        destructive: true,
        ..op(
            "messages_send_mime",
            "messages",
            Method::Post,
            "/v3/{domain}/messages.mime",
            "send a ready-made MIME message",
        )
    },
    Operation {
        params: &[
            DOMAIN,
            Param::path("storage_key", "storage.key of an event"),
            Param::header("Accept", "message/rfc2822: the raw MIME instead of parsed parts")
                .one_of(&["application/json", "message/rfc2822"])
                .default("application/json"),
        ],
        ..op(
            "messages_get",
            "messages",
            Method::Get,
            "/v3/domains/{domain}/messages/{storage_key}",
            "stored message by storage key (kept about 3 days)",
        )
    },
    // bounces
    Operation {
        params: &[
            DOMAIN,
            // The spec allows up to 10000; the current vendor reference says 1000.
            Param::query("limit", "maximum entries per page").int().range(1.0, 10000.0).default("100"),
            SUPPRESSION_PAGE,
            PIVOT,
            TERM,
        ],
        paging: Paging::PagingUrl,
        id_field: Some("address"),
        ..op("bounces_list", "bounces", Method::Get, "/v3/{domain}/bounces", "bounced addresses of a domain")
    },
    Operation {
        params: &[DOMAIN, ADDRESS],
        ..op(
            "bounces_get",
            "bounces",
            Method::Get,
            "/v3/{domain}/bounces/{address}",
            "one bounce record by email address",
        )
    },
    Operation {
        params: &[
            DOMAIN,
            Param::body("address", "email address to suppress").required(),
            Param::body("code", "SMTP error code").int().default("550"),
            Param::body("error", "SMTP error message"),
            CREATED_AT,
        ],
        body: BodyEncoding::Form,
        ..op("bounces_create", "bounces", Method::Post, "/v3/{domain}/bounces", "add an address to the bounce list")
    },
    Operation {
        params: &[DOMAIN, ADDRESS],
        ..op(
            "bounces_delete",
            "bounces",
            Method::Delete,
            "/v3/{domain}/bounces/{address}",
            "remove an address from the bounce list",
        )
    },
    Operation {
        params: &[DOMAIN],
        ..op("bounces_clear", "bounces", Method::Delete, "/v3/{domain}/bounces", "clear every bounce of a domain")
    },
    // complaints
    Operation {
        params: &[DOMAIN, SUPPRESSION_LIMIT, SUPPRESSION_PAGE, PIVOT, TERM],
        paging: Paging::PagingUrl,
        id_field: Some("address"),
        ..op("complaints_list", "complaints", Method::Get, "/v3/{domain}/complaints", "spam complaints of a domain")
    },
    // unsubscribes
    Operation {
        params: &[DOMAIN, SUPPRESSION_LIMIT, SUPPRESSION_PAGE, PIVOT, TERM],
        paging: Paging::PagingUrl,
        id_field: Some("address"),
        ..op(
            "unsubscribes_list",
            "unsubscribes",
            Method::Get,
            "/v3/{domain}/unsubscribes",
            "unsubscribed addresses of a domain",
        )
    },
    Operation {
        params: &[
            DOMAIN,
            Param::body("address", "email address to unsubscribe").required(),
            Param::body("tag", "unsubscribe from this tag only (*: all mail)").default("*"),
            CREATED_AT,
        ],
        body: BodyEncoding::Form,
        ..op(
            "unsubscribes_create",
            "unsubscribes",
            Method::Post,
            "/v3/{domain}/unsubscribes",
            "add an address to the unsubscribe list",
        )
    },
    Operation {
        params: &[
            DOMAIN,
            ADDRESS,
            // Removing a single tag this way is unconfirmed in the reference.
            Param::query("tag", "remove only this tag (empty: the whole record)"),
        ],
        ..op(
            "unsubscribes_delete",
            "unsubscribes",
            Method::Delete,
            "/v3/{domain}/unsubscribes/{address}",
            "remove an address from the unsubscribe list",
        )
    },
    // mailing lists
    Operation {
        params: &[
            Param::query("limit", "maximum lists per page").int().min(1.0).default("100"),
            Param::query("page", "which page, relative to address").one_of(&["first", "last", "next", "previous"]),
            Param::query("address", "page pivot: the list address to page from"),
        ],
        // The paged form of `GET /v3/lists` (which pages by skip/limit), as both SDKs use.
        paging: Paging::PagingUrl,
        id_field: Some("address"),
        ..op("mailing_lists_list", "mailing lists", Method::Get, "/v3/lists/pages", "all mailing lists")
    },
    Operation {
        params: &[LIST],
        ..op("mailing_lists_get", "mailing lists", Method::Get, "/v3/lists/{list_address}", "one mailing list")
    },
    Operation {
        params: &[
            Param::body("address", "list address, e.g. dev@mg.example.com").required(),
            Param::body("name", "display name"),
            Param::body("description", "what the list is for"),
            ACCESS_LEVEL,
            REPLY_PREFERENCE,
        ],
        body: BodyEncoding::Form,
        ..op("mailing_lists_create", "mailing lists", Method::Post, "/v3/lists", "create a mailing list")
    },
    Operation {
        params: &[
            LIST,
            Param::body("address", "new list address (renames the list)"),
            Param::body("name", "display name"),
            Param::body("description", "what the list is for"),
            Param::body("access_level", "who may post to the list").one_of(&["readonly", "members", "everyone"]),
            Param::body("reply_preference", "where replies go").one_of(&["list", "sender"]),
        ],
        body: BodyEncoding::Form,
        ..op("mailing_lists_update", "mailing lists", Method::Put, "/v3/lists/{list_address}", "update a mailing list")
    },
    Operation {
        params: &[LIST],
        ..op(
            "mailing_lists_delete",
            "mailing lists",
            Method::Delete,
            "/v3/lists/{list_address}",
            "delete a mailing list and its members",
        )
    },
    // list members
    Operation {
        params: &[
            LIST,
            Param::query("subscribed", "only subscribed (yes) or unsubscribed (no)").one_of(YES_NO),
            Param::query("limit", "maximum members per page").int().range(1.0, 100.0).default("100"),
            Param::query("page", "which page, relative to address").one_of(&["first", "last", "next", "prev"]),
            Param::query("address", "page pivot: the member address to page from"),
        ],
        // The paged form of `GET /v3/lists/{list_address}/members` (skip/limit), as the SDKs use.
        paging: Paging::PagingUrl,
        id_field: Some("address"),
        ..op(
            "mailing_lists_members_list",
            "list members",
            Method::Get,
            "/v3/lists/{list_address}/members/pages",
            "members of a mailing list",
        )
    },
    Operation {
        params: &[
            LIST,
            Param::body("address", "member address, e.g. Alice <alice@example.com>").required(),
            Param::body("name", "member name"),
            Param::body("vars", "custom variables object, e.g. {\"age\":27}").json(),
            Param::body("subscribed", "no: add as unsubscribed").one_of(YES_NO).default("yes"),
            Param::body("upsert", "yes: update the member if it exists").one_of(YES_NO).default("no"),
        ],
        body: BodyEncoding::Form,
        ..op(
            "mailing_lists_members_add",
            "list members",
            Method::Post,
            "/v3/lists/{list_address}/members",
            "add a member to a mailing list",
        )
    },
    Operation {
        params: &[LIST, Param::path("member_address", "member email address")],
        ..op(
            "mailing_lists_members_delete",
            "list members",
            Method::Delete,
            "/v3/lists/{list_address}/members/{member_address}",
            "remove a member from a mailing list",
        )
    },
    // routes
    Operation {
        params: &[
            Param::query("limit", "maximum routes returned").int().range(1.0, 1000.0).default("100"),
            Param::query("skip", "number of routes to skip").int().min(0.0).default("0"),
        ],
        paging: Paging::SkipLimit,
        id_field: Some("id"),
        ..op("routes_list", "routes", Method::Get, "/v3/routes", "all routes of the account")
    },
    Operation { params: &[ROUTE], ..op("routes_get", "routes", Method::Get, "/v3/routes/{id}", "one route by id") },
    Operation {
        params: &[
            Param::body("expression", "filter, e.g. match_recipient(\".*@mg.example.com\")").required(),
            Param::body("action", "actions, e.g. forward(\"https://x/in\"),stop() (comma-separated)").list(),
            Param::body("priority", "lower runs first").int().min(0.0).default("0"),
            Param::body("description", "free-form description"),
        ],
        body: BodyEncoding::Form,
        ..op("routes_create", "routes", Method::Post, "/v3/routes", "create a route for incoming email")
    },
    Operation {
        params: &[
            ROUTE,
            Param::body("expression", "filter, e.g. catch_all()"),
            Param::body("action", "replacement actions, e.g. store(),stop() (comma-separated)").list(),
            Param::body("priority", "lower runs first").int().min(0.0),
            Param::body("description", "free-form description"),
        ],
        body: BodyEncoding::Form,
        ..op("routes_update", "routes", Method::Put, "/v3/routes/{id}", "update a route")
    },
    Operation {
        params: &[ROUTE],
        ..op("routes_delete", "routes", Method::Delete, "/v3/routes/{id}", "delete a route")
    },
    // webhooks
    Operation {
        params: &[DOMAIN],
        // One object keyed by webhook name rather than rows, and never more than one page: each
        // member is a row named by its key, the `id` the other webhook operations take.
        id_field: Some("id"),
        keyed: Some("webhooks"),
        paging: Paging::PagingUrl,
        ..op(
            "webhooks_list",
            "webhooks",
            Method::Get,
            "/v3/domains/{domain}/webhooks",
            "webhooks of a domain, by event name",
        )
    },
    Operation {
        params: &[
            DOMAIN,
            Param::body("id", "webhook name, e.g. delivered").required().one_of(WEBHOOK_NAMES),
            WEBHOOK_URLS,
        ],
        body: BodyEncoding::Form,
        ..op(
            "webhooks_create",
            "webhooks",
            Method::Post,
            "/v3/domains/{domain}/webhooks",
            "create a webhook for a domain",
        )
    },
    Operation {
        params: &[DOMAIN, WEBHOOK, WEBHOOK_URLS],
        body: BodyEncoding::Form,
        ..op(
            "webhooks_update",
            "webhooks",
            Method::Put,
            "/v3/domains/{domain}/webhooks/{id}",
            "replace the URLs of a webhook",
        )
    },
    Operation {
        params: &[DOMAIN, WEBHOOK],
        ..op("webhooks_delete", "webhooks", Method::Delete, "/v3/domains/{domain}/webhooks/{id}", "delete a webhook")
    },
    // stats
    Operation {
        params: &[
            DOMAIN,
            Param::query("event", "event types to count (comma-separated)").list().required().one_of(&[
                "accepted",
                "delivered",
                "failed",
                "opened",
                "clicked",
                "unsubscribed",
                "complained",
                "stored",
            ]),
            Param::query("start", "RFC 2822 or epoch seconds (default: 7 days ago)"),
            Param::query("end", "RFC 2822 or epoch seconds (default: now)"),
            Param::query("resolution", "bucket size").one_of(&["hour", "day", "month"]).default("day"),
            Param::query("duration", "period back from end, e.g. 24h, 7d, 1m (overrides start)"),
        ],
        ..op("stats_total", "stats", Method::Get, "/v3/{domain}/stats/total", "total statistics of a domain")
    },
    // validations
    Operation {
        params: &[
            Param::query("address", "email address to check").required().max(512.0),
            Param::query("provider_lookup", "false: skip the mailbox provider check").boolean().default("true"),
        ],
        // The current endpoint is v4; the v3 validation paths are legacy (public key).
        ..op(
            "email_validate",
            "validations",
            Method::Get,
            "/v4/address/validate",
            "check an address for deliverability, syntax and disposability",
        )
    },
];
