//! Ably REST (spec part A). Wire facts: `shared/api/ably.md`.

use super::{BodyEncoding, Kind, Method, Operation, Paging, Param, Service};

const CHANNEL: Param = Param::path("channelId", "channel name, e.g. orders:eu");
const DEVICE: Param = Param::path("deviceId", "push device id");
const LIMIT: Param = Param::query("limit", "maximum records per page").int().range(1.0, 1000.0).default("100");
const START: Param = Param::query("start", "start of the time range: ms epoch or ISO 8601");
const END: Param = Param::query("end", "end of the time range: ms epoch or ISO 8601");
const DIRECTION: Param = Param::query("direction", "newest first (backwards) or oldest first")
    .one_of(&["forwards", "backwards"])
    .default("backwards");

const fn op(
    name: &'static str,
    resource: &'static str,
    method: Method,
    path: &'static str,
    summary: &'static str,
) -> Operation {
    Operation::base(Service::Ably, name, resource, method, path, summary)
}

pub(super) static OPERATIONS: &[Operation] = &[
    Operation {
        params: &[
            Param::query("prefix", "only channels whose name starts with this"),
            Param::query("by", "id: names only; value: full metadata").one_of(&["id", "value"]).default("id"),
            LIMIT,
        ],
        paging: Paging::LinkHeader,
        id_field: Some("channelId"),
        browse: &[("by", "value")],
        ..op("channels_list", "channels", Method::Get, "/channels", "list active channels of the application")
    },
    Operation {
        params: &[CHANNEL],
        ..op("channels_get", "channels", Method::Get, "/channels/{channelId}", "metadata and occupancy of one channel")
    },
    Operation {
        params: &[
            CHANNEL,
            Param::body("name", "event name of the message"),
            Param::body("data", "payload: text, or a JSON object or array").kind(Kind::Data),
            Param::body("clientId", "publisher's client id"),
            Param::body("id", "message id for idempotent publishing"),
            Param::body("extras", "extras object, e.g. {\"push\":{...}}").json(),
        ],
        body: BodyEncoding::Json,
        ..op(
            "messages_publish",
            "messages",
            Method::Post,
            "/channels/{channelId}/messages",
            "publish a message to a channel",
        )
    },
    Operation {
        params: &[Param::whole_body(
            "batch",
            "[{\"channels\":[\"a\",\"b\"],\"messages\":[{\"name\":\"n\",\"data\":\"d\"}]}]",
        )
        .json()
        .template(r#"[{"channels":[""],"messages":[{"name":"","data":""}]}]"#)
        .required()],
        body: BodyEncoding::Json,
        ..op(
            "messages_batch_publish",
            "messages",
            Method::Post,
            "/messages",
            "publish messages to several channels in one request",
        )
    },
    Operation {
        params: &[CHANNEL, START, END, LIMIT, DIRECTION],
        paging: Paging::LinkHeader,
        id_field: Some("id"),
        ..op("messages_list", "messages", Method::Get, "/channels/{channelId}/messages", "message history of a channel")
    },
    Operation {
        params: &[
            CHANNEL,
            Param::query("clientId", "only this client's member"),
            Param::query("connectionId", "only members of this connection"),
            LIMIT,
        ],
        paging: Paging::LinkHeader,
        id_field: Some("clientId"),
        ..op(
            "presence_get",
            "presence",
            Method::Get,
            "/channels/{channelId}/presence",
            "current presence set of a channel",
        )
    },
    Operation {
        params: &[CHANNEL, START, END, LIMIT, DIRECTION],
        paging: Paging::LinkHeader,
        id_field: Some("id"),
        ..op(
            "presence_history",
            "presence",
            Method::Get,
            "/channels/{channelId}/presence/history",
            "presence event history of a channel",
        )
    },
    Operation {
        params: &[
            Param::body("id", "device id, unique in the app").required().range(1.0, 128.0),
            Param::body("platform", "device platform").required().one_of(&["ios", "android", "browser"]),
            Param::body("formFactor", "device form factor")
                .required()
                .one_of(&["phone", "tablet", "desktop", "tv", "watch", "car", "embedded", "other"]),
            Param::body("push", "{\"recipient\":{\"transportType\":\"fcm\",\"registrationToken\":\"...\"}}")
                .json()
                .template(r#"{"recipient":{"transportType":"","registrationToken":""}}"#)
                .required(),
            Param::body("clientId", "client id the device belongs to"),
            Param::body("metadata", "free-form metadata object").json(),
        ],
        body: BodyEncoding::Json,
        ..op(
            "push_device_register",
            "push devices",
            Method::Post,
            "/push/deviceRegistrations",
            "register a device for push",
        )
    },
    Operation {
        params: &[DEVICE],
        ..op(
            "push_device_get",
            "push devices",
            Method::Get,
            "/push/deviceRegistrations/{deviceId}",
            "details of one registered device",
        )
    },
    Operation {
        params: &[
            Param::query("deviceId", "only this device"),
            Param::query("clientId", "only devices of this client"),
            LIMIT,
        ],
        paging: Paging::LinkHeader,
        id_field: Some("id"),
        ..op("push_device_list", "push devices", Method::Get, "/push/deviceRegistrations", "list registered devices")
    },
    Operation {
        params: &[DEVICE],
        ..op(
            "push_device_delete",
            "push devices",
            Method::Delete,
            "/push/deviceRegistrations/{deviceId}",
            "unregister a device and its subscriptions",
        )
    },
    Operation {
        params: &[
            Param::body("recipient", "{\"deviceId\":\"...\"} or {\"clientId\":\"...\"}")
                .json()
                .template(r#"{"clientId":""}"#)
                .required(),
            Param::body("notification", "{\"title\":\"...\",\"body\":\"...\"}").json(),
            Param::body("data", "string key/value pairs for the app").json(),
        ],
        body: BodyEncoding::Json,
        ..op(
            "push_publish",
            "push notifications",
            Method::Post,
            "/push/publish",
            "send a push notification directly to devices",
        )
    },
    Operation {
        params: &[
            Param::body("channel", "channel to receive pushes from").required(),
            Param::body("deviceId", "subscribe this device (or give clientId)"),
            Param::body("clientId", "subscribe all devices of this client (or give deviceId)"),
        ],
        body: BodyEncoding::Json,
        ..op(
            "push_subscriptions_create",
            "push subscriptions",
            Method::Post,
            "/push/channelSubscriptions",
            "subscribe a device or client to push on a channel",
        )
    },
    Operation {
        params: &[
            Param::query("channel", "only this channel"),
            Param::query("deviceId", "only this device"),
            Param::query("clientId", "only this client"),
            Param::query("concatFilters", "true: deviceId and clientId are OR-ed").boolean().default("false"),
            LIMIT,
        ],
        paging: Paging::LinkHeader,
        id_field: Some("channel"),
        ..op(
            "push_subscriptions_list",
            "push subscriptions",
            Method::Get,
            "/push/channelSubscriptions",
            "list push channel subscriptions",
        )
    },
    Operation {
        params: &[
            Param::query("channel", "the channel (absent: every channel!)"),
            Param::query("deviceId", "the device (or give clientId)"),
            Param::query("clientId", "the client (or give deviceId)"),
        ],
        ..op(
            "push_subscriptions_delete",
            "push subscriptions",
            Method::Delete,
            "/push/channelSubscriptions",
            "remove a push channel subscription",
        )
    },
    Operation {
        params: &[
            START,
            END,
            LIMIT,
            DIRECTION,
            Param::query("unit", "interval of each record")
                .one_of(&["minute", "hour", "day", "month"])
                .default("minute"),
        ],
        paging: Paging::LinkHeader,
        id_field: Some("intervalId"),
        ..op("stats_get", "stats", Method::Get, "/stats", "application usage statistics")
    },
    Operation { ..op("time_get", "time", Method::Get, "/time", "current server time (ms epoch)") },
    Operation {
        params: &[
            Param::path("keyName", "<appId>.<keyId>, the part of the key before ':'"),
            Param::body("timestamp", "ms epoch within 2 minutes of server time (empty: now)").int(),
            Param::body("ttl", "token lifetime in ms").int().range(1.0, 86_400_000.0).default("3600000"),
            Param::body("capability", "canonical JSON string, e.g. {\"*\":[\"*\"]}"),
            Param::body("clientId", "bind the token to this client id"),
            Param::body("nonce", "16+ random characters (empty: generated when signing)"),
            Param::body("mac", "HMAC of the fields (empty: opsdeck signs with the key)"),
        ],
        body: BodyEncoding::Json,
        mutates: false,
        ..op(
            "tokens_request",
            "tokens",
            Method::Post,
            "/keys/{keyName}/requestToken",
            "request a token for client authentication",
        )
    },
];
