use super::*;

fn op(name: &str) -> &'static Operation {
    Service::Easypost.operation(name).unwrap()
}

fn rate(id: &str, carrier: &str, service: &str, price: &str, days: Option<u64>) -> Value {
    json!({"id": id, "object": "Rate", "mode": "test", "service": service, "carrier": carrier, "rate": price,
        "currency": "USD", "retail_rate": price, "delivery_days": days, "delivery_date": null,
        "delivery_date_guaranteed": false, "est_delivery_days": days, "shipment_id": "shp_1",
        "carrier_account_id": "ca_1"})
}

fn address(name: &str, city: &str, state: &str, zip: &str) -> Value {
    json!({"id": format!("adr_{name}"), "object": "Address", "name": name, "street1": "388 TOWNSEND ST",
        "city": city, "state": state, "zip": zip, "country": "US", "verifications": {}})
}

/// A shipment as `shipments_create` answers it (api/easypost.md §7.3), not bought yet.
fn shipment(rates: Vec<Value>) -> Value {
    json!({"id": "shp_1", "object": "Shipment", "mode": "test", "status": "unknown", "tracking_code": null,
        "to_address": address("JACK SPARROW", "SAN FRANCISCO", "CA", "94107"),
        "from_address": address("EASYPOST", "HOUSTON", "TX", "77063"),
        "parcel": {"id": "prcl_1", "object": "Parcel", "length": 10.0, "width": 8.0, "height": 4.0, "weight": 15.4,
            "predefined_package": null},
        "rates": rates, "selected_rate": null, "postage_label": null, "tracker": null, "messages": [],
        "created_at": "2025-03-07T16:46:17Z"})
}

fn bought(mut shipment: Value) -> Value {
    let chosen = shipment["rates"][0].clone();
    shipment["selected_rate"] = chosen;
    shipment["tracking_code"] = json!("9400100208303109505657");
    shipment["postage_label"] = json!({"object": "PostageLabel", "id": "pl_1", "label_file_type": "image/png",
        "label_size": "4x6", "label_resolution": 300,
        "label_url": "https://easypost-files.s3.us-west-2.amazonaws.com/files/postage_label/20250307/ab.png",
        "label_pdf_url": null, "label_zpl_url": null, "label_epl2_url": null});
    shipment["tracker"] = json!({"id": "trk_1", "object": "Tracker", "status": "unknown"});
    shipment["fees"] =
        json!([{"object": "Fee", "type": "PostageFee", "amount": "6.07000", "charged": true, "refunded": false}]);
    shipment
}

fn marks(ranked: &[RankedRate]) -> Vec<(String, bool, bool)> {
    ranked.iter().map(|r| (field(r.rate, "service"), r.cheapest, r.fastest)).collect()
}

#[test]
fn rates_rank_cheapest_first_with_ties_and_a_rate_that_is_both() {
    let rates = vec![
        rate("rate_e", "USPS", "Express", "34.15", Some(1)),
        rate("rate_g", "USPS", "GroundAdvantage", "6.07", Some(3)),
        rate("rate_p", "USPS", "Priority", "7.42", Some(2)),
    ];
    let ranked = rank_rates(&rates);
    assert_eq!(
        marks(&ranked),
        [("GroundAdvantage".into(), true, false), ("Priority".into(), false, false), ("Express".into(), false, true)]
    );
    // Two rates at the lowest price are both the cheapest; two at the fewest days both the fastest.
    let ties = vec![
        rate("rate_a", "UPS", "Ground", "6.07", Some(3)),
        rate("rate_b", "USPS", "GroundAdvantage", "6.070", Some(1)),
        rate("rate_c", "FedEx", "Overnight", "40.00", Some(1)),
        rate("rate_d", "DHL", "Unpriced", "n/a", None),
    ];
    let ranked = rank_rates(&ties);
    assert_eq!(
        marks(&ranked),
        [
            ("GroundAdvantage".into(), true, true),
            ("Ground".into(), true, false),
            ("Overnight".into(), false, true),
            ("Unpriced".into(), false, false)
        ],
        "the tie on price goes to the faster; a rate without price or days is last and neither"
    );
    // One rate is both.
    let one = vec![rate("rate_x", "USPS", "Priority", "7.42", Some(2))];
    assert_eq!(marks(&rank_rates(&one)), [("Priority".into(), true, true)]);
    // Prices in two currencies are not compared.
    let mut mixed = vec![
        rate("rate_u", "USPS", "Priority", "7.42", Some(2)),
        rate("rate_c", "CanadaPost", "Xpresspost", "9.10", Some(2)),
    ];
    mixed[1]["currency"] = json!("CAD");
    assert!(rank_rates(&mixed).iter().all(|r| !r.cheapest && r.fastest));
    assert!(rank_rates(&[json!("rate_x"), json!(null)]).is_empty());
}

#[test]
fn a_shipment_not_bought_shows_its_rates_marked_and_buys_the_selected_one() {
    let body = shipment(vec![
        rate("rate_e", "USPS", "Express", "34.15", Some(1)),
        rate("rate_g", "USPS", "GroundAdvantage", "6.07", Some(3)),
    ]);
    let mut detail = detail_for(op("shipments_create"), &body).unwrap();
    assert_eq!(detail.title, "shipment shp_1 · not bought");
    assert_eq!(detail.subject.as_deref(), Some("shipment shp_1"));
    let rates = &detail.tables[0];
    assert_eq!(rates.rows[0], ["cheapest", "USPS", "GroundAdvantage", "6.07 USD", "3", "3"]);
    assert_eq!(rates.rows[1][..4], ["fastest", "USPS", "Express", "34.15 USD"]);
    assert_eq!(rates.tones, [Some(Tone::Good), Some(Tone::Info)]);
    assert_eq!(detail.selectable, Some(0));
    assert!(detail.facts.iter().any(|(l, v, _)| l == "to" && v.contains("SAN FRANCISCO, CA 94107")));
    assert!(detail.facts.iter().any(|(l, v, _)| l == "parcel" && v == "15.4 oz · 10 × 8 × 4 in"), "{:?}", detail.facts);
    let key =
        |c| crossterm::event::KeyEvent::new(crossterm::event::KeyCode::Char(c), crossterm::event::KeyModifiers::NONE);
    detail.handle_key(key('j'));
    let buy = detail.handle_key(key('b'));
    let expected = DetailCommand::Form {
        op: "shipments_buy",
        values: vec![("id".into(), "shp_1".into()), ("rate".into(), r#"{"id":"rate_e"}"#.into())],
    };
    assert_eq!(buy, crate::tui::components::detail::DetailAction::Run(expected), "b buys the rate selected");
    assert!(detail.commands.iter().all(|k| k.key != 's'), "nothing to save before buying");
}

#[test]
fn a_bought_shipment_shows_its_label_tracking_code_and_rate_and_saves_or_converts_the_label() {
    let body = bought(shipment(vec![rate("rate_g", "USPS", "GroundAdvantage", "6.07", Some(3))]));
    let detail = detail_for(op("shipments_buy"), &body).unwrap();
    assert_eq!(detail.title, "shipment shp_1 · bought · unknown");
    assert!(detail.facts.contains(&("tracking".into(), "9400100208303109505657".into(), None)));
    assert!(detail.facts.contains(&("bought".into(), "USPS GroundAdvantage · 6.07 USD".into(), None)));
    assert_eq!(detail.tables[2].rows[0][0], "bought, cheapest, fastest", "the rates offered, last");
    assert_eq!(detail.selectable, None, "a bought shipment's rates are no choice");
    let files = &detail.tables[0];
    assert_eq!(files.rows[0][0], "PNG");
    assert!(files.rows[0][2].ends_with("/ab.png"));
    assert_eq!(detail.tables[1].rows[0], ["PostageFee", "6.07", ""]);
    let command = |key: char| detail.commands.iter().find(|k| k.key == key).map(|k| k.command.clone());
    assert_eq!(
        command('s'),
        Some(DetailCommand::Save {
            url: "https://easypost-files.s3.us-west-2.amazonaws.com/files/postage_label/20250307/ab.png".into(),
            file_name: "9400100208303109505657.png".into()
        })
    );
    let Some(DetailCommand::Choose { choices, .. }) = command('c') else { panic!("c asks the format") };
    let names: Vec<&str> = choices.iter().map(|k| k.label).collect();
    assert_eq!(names, ["PDF", "ZPL", "EPL2", "PNG"]);
    assert_eq!(
        choices[1].command,
        DetailCommand::SendThenSave {
            op: "shipments_label",
            values: vec![("id".into(), "shp_1".into()), ("file_format".into(), "ZPL".into())],
            pointer: "/postage_label/label_zpl_url".into(),
            file_name: "9400100208303109505657.zpl".into()
        }
    );
    assert!(
        matches!(&choices[3].command, DetailCommand::Save { file_name, .. } if file_name.ends_with(".png")),
        "PNG is the label as bought"
    );
    assert_eq!(
        command('t'),
        Some(DetailCommand::Open { op: "trackers_get", values: vec![("id".into(), "trk_1".into())] })
    );

    // Converted once, the PDF is saved as it is; the files table lists it.
    let mut converted = body.clone();
    converted["postage_label"]["label_pdf_url"] = json!("http://127.0.0.1:7708/files/postage_label/ab.pdf");
    let detail = detail_for(op("shipments_label"), &converted).unwrap();
    assert_eq!(detail.tables[0].rows[1][..2], ["PDF", "converted"]);
    let Some(DetailKey { command: DetailCommand::Choose { choices, .. }, .. }) =
        detail.commands.iter().find(|k| k.key == 'c')
    else {
        panic!()
    };
    assert_eq!(
        choices[0].command,
        DetailCommand::Save {
            url: "http://127.0.0.1:7708/files/postage_label/ab.pdf".into(),
            file_name: "9400100208303109505657.pdf".into()
        }
    );
}

#[test]
fn file_names_from_server_text_stay_in_their_folder() {
    assert_eq!(file_name("../../etc/passwd", "png"), "______etc_passwd.png");
    assert_eq!(file_name("", "pdf"), "label.pdf");
    assert_eq!(file_name("9400", "p/df"), "9400.p_df");
    assert_eq!(label_extension("", "https://x.example/files/a.ZPL?X-Amz=1"), "zpl");
    assert_eq!(label_extension("", "https://x.example/files/label"), "label");
    assert_eq!(label_extension("application/pdf", "https://x.example/a.png"), "pdf");
}

#[test]
fn a_tracker_shows_its_timeline_newest_first_and_asks_again_until_delivered() {
    let detail_at = |datetime: &str, status: &str, message: &str| {
        json!({"object": "TrackingDetail", "message": message, "description": "", "status": status,
            "status_detail": "status_update", "datetime": datetime, "source": "USPS", "carrier_code": "",
            "tracking_location": {"object": "TrackingLocation", "city": "HOUSTON", "state": "TX", "country": null, "zip": "77063"}})
    };
    let mut tracker = json!({"id": "trk_1", "object": "Tracker", "mode": "test", "tracking_code": "EZ2000000002",
    "status": "in_transit", "status_detail": "arrived_at_facility", "created_at": "2025-02-07T08:25:26Z",
    "updated_at": "2025-02-08T10:00:00Z", "signed_by": null, "weight": null, "est_delivery_date": "2025-02-10T00:00:00Z",
    "shipment_id": null, "carrier": "USPS", "finalized": false, "is_return": false,
    "public_url": "https://track.easypost.com/djE6dHJrXzE",
    "carrier_detail": {"object": "CarrierDetail", "service": "First-Class Package Service",
        "origin_location": "HOUSTON TX, 77001", "destination_location": "CHARLESTON SC, 29401"},
    "tracking_details": [
        detail_at("2025-02-07T08:25:26Z", "pre_transit", "Shipping Label Created"),
        detail_at("2025-02-08T10:00:00Z", "in_transit", "Arrived at USPS Facility")
    ]});
    let detail = detail_for(op("trackers_get"), &tracker).unwrap();
    assert_eq!(detail.title, "tracker EZ2000000002 · in_transit");
    assert_eq!(detail.facts[0], ("status".into(), "in_transit".into(), Some(Tone::Pending)));
    assert!(detail.facts.contains(&("est. delivery".into(), "2025-02-10 00:00:00".into(), None)));
    assert!(detail.facts.contains(&("to".into(), "CHARLESTON SC, 29401".into(), None)));
    let timeline = &detail.tables[0];
    assert_eq!(timeline.title, "timeline (2 events, newest first)");
    assert_eq!(
        timeline.rows[0],
        ["2025-02-08 10:00:00", "in_transit", "Arrived at USPS Facility", "HOUSTON, TX 77063"]
    );
    assert_eq!(timeline.rows[1][2], "Shipping Label Created");
    assert_eq!(detail.watch, Some(("trackers_get", vec![("id".into(), "trk_1".into())])));
    assert_eq!(detail.texts[0].1, "https://track.easypost.com/djE6dHJrXzE");

    tracker["status"] = json!("delivered");
    tracker["signed_by"] = json!("J. SPARROW");
    let delivered = detail_for(op("trackers_get"), &tracker).unwrap();
    assert_eq!(delivered.watch, None, "a delivered package does not move: no more asking");
    assert_eq!(delivered.facts[0].2, Some(Tone::Good));
    assert!(delivered.facts.contains(&("signed by".into(), "J. SPARROW".into(), None)));
    assert!(delivered.same_subject(&detail));
}

#[test]
fn a_batch_shows_its_shipments_and_keys_and_asks_again_while_it_moves() {
    let mut batch = json!({"id": "batch_1", "object": "Batch", "mode": "test", "state": "purchasing", "num_shipments": 2,
        "reference": null, "created_at": "2025-03-06T19:47:23Z", "updated_at": "2025-03-06T19:47:25Z", "scan_form": null,
        "shipments": [
            {"id": "shp_1", "reference": null, "tracking_code": "9400100208303109505725", "batch_status": "postage_purchased", "batch_message": null},
            {"id": "shp_2", "reference": null, "tracking_code": null, "batch_status": "queued_for_purchase", "batch_message": null}],
        "status": {"created": 0, "queued_for_purchase": 1, "creation_failed": 0, "postage_purchased": 1, "postage_purchase_failed": 0},
        "pickup": null, "label_url": null});
    let detail = detail_for(op("batches_get"), &batch).unwrap();
    assert_eq!(detail.title, "batch batch_1 · purchasing");
    assert!(detail.facts.contains(&("counts".into(), "1 queued_for_purchase · 1 postage_purchased".into(), None)));
    assert_eq!(detail.tables[0].rows[1][..2], ["shp_2", "queued_for_purchase"]);
    assert_eq!(detail.tables[0].tones, [Some(Tone::Good), Some(Tone::Pending)]);
    assert!(detail.watch.is_some());
    let keys: Vec<char> = detail.commands.iter().map(|k| k.key).collect();
    assert_eq!(keys, ['b', 'l', 'f']);
    assert_eq!(
        detail.commands[0].command,
        DetailCommand::Send { op: "batches_buy", values: vec![("id".into(), "batch_1".into())] }
    );
    let DetailCommand::Choose { choices, .. } = &detail.commands[1].command else { panic!("l asks the format") };
    assert_eq!(
        choices[2].command,
        DetailCommand::Send { op: "batches_label", values: pairs(&[("id", "batch_1"), ("file_format", "EPL2")]) }
    );

    batch["state"] = json!("label_generated");
    batch["shipments"][1]["batch_status"] = json!("postage_purchase_failed");
    batch["shipments"][1]["batch_message"] = json!("Unable to buy: address invalid");
    batch["label_url"] = json!("http://127.0.0.1:7708/files/batch_label/b.pdf");
    batch["scan_form"] = json!({"id": "sf_1", "object": "ScanForm", "status": "created", "message": null,
        "form_url": "http://127.0.0.1:7708/files/scan_form/s.pdf", "batch_id": "batch_1", "tracking_codes": []});
    let done = detail_for(op("batches_get"), &batch).unwrap();
    assert_eq!(done.watch, None, "nothing moves by itself any more");
    assert!(done.note.as_deref().is_some_and(|n| n.contains("shp_2 postage_purchase_failed: Unable to buy")));
    assert!(done.facts.contains(&("scan form".into(), "created".into(), Some(Tone::Good))));
    let save = |key: char| done.commands.iter().find(|k| k.key == key).map(|k| k.command.clone());
    assert_eq!(
        save('s'),
        Some(DetailCommand::Save {
            url: "http://127.0.0.1:7708/files/batch_label/b.pdf".into(),
            file_name: "batch_1-label.pdf".into()
        })
    );
    assert!(matches!(save('d'), Some(DetailCommand::Save { file_name, .. }) if file_name == "batch_1-scan-form.pdf"));
}

#[test]
fn an_address_shows_its_verification_errors_and_details() {
    let verified = json!({"address": {"id": "adr_2", "object": "Address", "name": "JACK SPARROW", "company": null,
        "street1": "388 TOWNSEND ST APT 20", "street2": "", "city": "SAN FRANCISCO", "state": "CA", "zip": "94107-1670",
        "country": "US", "residential": true,
        "verifications": {"zip4": {"success": true, "errors": [], "details": null},
            "delivery": {"success": true, "errors": [],
                "details": {"latitude": 37.77551, "longitude": -122.39697, "time_zone": "America/Los_Angeles"}}}}});
    let detail = detail_for(op("addresses_create_and_verify"), &verified).unwrap();
    assert_eq!(detail.title, "address JACK SPARROW · verified ✓");
    assert!(detail.facts.contains(&("time zone".into(), "America/Los_Angeles".into(), None)));
    assert!(detail.facts.contains(&("latitude".into(), "37.77551".into(), None)));
    assert_eq!(detail.tables[0].rows, [["zip4", "✓ success", "0"], ["delivery", "✓ success", "0"]]);

    let failed = json!({"id": "adr_3", "object": "Address", "street1": "1 NOWHERE", "city": "X", "state": "CA", "zip": "00000",
        "verifications": {"zip4": {"success": false, "errors": [{"code": "E.ADDRESS.NOT_FOUND", "field": "address",
            "message": "Address not found", "suggestion": null}], "details": null},
            "delivery": {"success": false, "errors": [{"code": "E.HOUSE_NUMBER.MISSING", "field": "street1",
                "message": "House number is missing", "suggestion": "1 MAIN ST"}, "plain text error"], "details": {}}}});
    let detail = detail_for(op("addresses_create"), &failed).unwrap();
    assert_eq!(detail.title, "address 1 NOWHERE · verification failed ✗");
    let errors = &detail.tables[1];
    assert_eq!(errors.title, "errors (3)");
    assert_eq!(
        errors.rows[1],
        ["delivery", "E.HOUSE_NUMBER.MISSING", "street1", "House number is missing", "1 MAIN ST"]
    );
    assert_eq!(errors.rows[2][3], "plain text error");
    assert_eq!(verified_mark(&failed), "✗");
    let plain = address("A", "B", "CA", "1");
    assert_eq!(verified_mark(&plain), "—");
    let detail = detail_for(op("addresses_get"), &plain).unwrap();
    assert_eq!(
        detail.commands[0].command,
        DetailCommand::Open { op: "addresses_verify", values: vec![("id".into(), "adr_A".into())] }
    );
    assert!(detail_for(op("addresses_list"), &plain).is_some_and(|d| d.title.contains("not verified")));
    assert!(detail_for(Service::Mailgun.operation("domains_get").unwrap(), &plain).is_none());
}

#[test]
fn a_purchase_says_what_it_buys_and_for_how_much() {
    let body = shipment(vec![rate("rate_p", "USPS", "Priority", "7.42", Some(2))]);
    let known = |id: &str| (id == "shp_1").then(|| body.clone());
    let values: Values =
        pairs(&[("id", "shp_1"), ("rate", r#"{"id":"rate_p"}"#), ("insurance", "100")]).into_iter().collect();
    let said = effects(op("shipments_buy"), &values, &known);
    assert_eq!(said, ["buys USPS Priority for 7.42 USD, 2 days", "and insures it for 100.00 USD, for a fee"]);
    let unknown: Values = pairs(&[("id", "shp_9"), ("rate", r#"{"id":"rate_q"}"#)]).into_iter().collect();
    assert!(effects(op("shipments_buy"), &unknown, &known)[0].contains("rate_q, whose price is not known here"));
    let batch = json!({"id": "batch_1", "object": "Batch", "num_shipments": 3});
    let values: Values = pairs(&[("id", "batch_1")]).into_iter().collect();
    assert_eq!(
        effects(op("batches_buy"), &values, &|_| Some(batch.clone()))[0],
        "buys postage for the batch's 3 shipment(s), each at its chosen rate"
    );
    let values: Values = pairs(&[("insurance", r#"{"tracking_code":"EZ1","amount":"249.99"}"#)]).into_iter().collect();
    assert_eq!(
        effects(op("insurance_create"), &values, &|_| None),
        ["buys insurance of 249.99 USD for EZ1, for a fee"]
    );
    assert!(effects(op("shipments_get"), &values, &|_| None).is_empty());
}

#[test]
fn forms_get_the_id_of_their_own_resource_and_a_bought_shipments_codes() {
    let record = bought(shipment(vec![rate("rate_p", "USPS", "Priority", "7.42", Some(2))]));
    let record = record.as_object().unwrap();
    let mut values: Values = pairs(&[("id", "shp_1")]).into_iter().collect();
    suggest(op("trackers_get"), record, &mut values);
    assert_eq!(values.get("id").map(String::as_str), Some("trk_1"), "a shipment's tracker");
    let mut values: Values = pairs(&[("id", "shp_1")]).into_iter().collect();
    suggest(op("batches_get"), record, &mut values);
    assert!(!values.contains_key("id"), "a shipment in no batch gives no batch id");
    let mut values = Values::new();
    suggest(op("refunds_create"), record, &mut values);
    let refund: Value = serde_json::from_str(&values["refund"]).unwrap();
    assert_eq!(refund, json!({"carrier": "USPS", "tracking_codes": ["9400100208303109505657"]}));
    let mut values = Values::new();
    suggest(op("insurance_create"), record, &mut values);
    let insurance: Value = serde_json::from_str(&values["insurance"]).unwrap();
    assert_eq!(insurance["to_address"], json!({"id": "adr_JACK SPARROW"}));
    // No selection: an id of another kind (a tracker's, remembered while browsing) is dropped.
    let mut values: Values = pairs(&[("id", "trk_1")]).into_iter().collect();
    suggest(op("shipments_get"), &Map::new(), &mut values);
    assert!(values.is_empty());
    let tracker = json!({"id": "trk_1", "object": "Tracker", "shipment_id": "shp_1"});
    let mut values = Values::new();
    suggest(op("shipments_label"), tracker.as_object().unwrap(), &mut values);
    assert_eq!(values.get("id").map(String::as_str), Some("shp_1"));
}

#[test]
fn list_columns_read_as_what_where_and_when() {
    let record = bought(shipment(vec![rate("rate_p", "USPS", "Priority", "7.42", Some(2))]));
    let shipments = crate::table::RowSpec::new(Some("id"), layout(op("shipments_list")));
    let cells = crate::table::cells_of(&record, &shipments);
    assert_eq!(
        cells,
        [
            "USPS",
            "9400100208303109505657",
            "unknown",
            "Priority",
            "SAN FRANCISCO, CA 94107",
            "2025-03-07 16:46:17",
            "shp_1"
        ]
    );
    let batches = layout_columns("batches_list");
    assert!(batches.contains(&"scan_form.status".to_owned()), "{batches:?}");
    let insurance = json!({"id": "ins_1", "object": "Insurance", "status": "pending", "amount": "100.00000",
        "tracking_code": "EZ1", "fee": {"object": "Fee", "type": "InsuranceFee", "amount": "1.00000"}});
    let fee = crate::table::Column { money: true, ..Column::new(vec!["fee".into()]) };
    let only = |column: Column| crate::table::RowSpec { id_field: None, columns: Some(vec![column]), cell: Some(cell) };
    assert_eq!(crate::table::cells_of(&insurance, &only(fee)), ["1.00"]);
    let hook = json!({"id": "hook_1", "url": "http://example.com", "custom_headers": [{"name": "X-Key", "value": "s3cret"}, {"name": "X-Two", "value": "v"}]});
    let headers = Column::new(vec!["headers".into()]);
    assert_eq!(crate::table::cells_of(&hook, &only(headers)), ["X-Key, X-Two"], "names only: a value may be a secret");
    assert_eq!(status_tone("delivered"), Some(Tone::Good));
    assert_eq!(status_tone("return_to_sender"), Some(Tone::Bad));
    assert_eq!(batch_state_tone("label_generating"), Some(Tone::Pending));
    assert_eq!(batch_state_tone("CA"), None);
    assert_eq!(time_text("2025-03-06T19:47:20+00:00"), "2025-03-06 19:47:20", "seconds kept");
    assert_eq!(time_text("soon"), "soon");
    assert!(layout(Service::Mailgun.operation("events_list").unwrap()).is_none());
}

fn layout_columns(name: &str) -> Vec<String> {
    layout(op(name)).unwrap().columns.iter().map(Column::label).collect()
}
