//! What the console's views show, read off the screen as a user sees it: the browser's columns
//! at 200 and 80 columns (widths, constant columns, columns from every record, one time format),
//! the chart's axis and its interval still counting, the history's columns and counts, and the
//! sandbox view adding and clearing faults through the real control port of the embedded
//! sandbox.
#![allow(clippy::unwrap_used, reason = "tests")]

use std::time::Duration;

use opsdeck::catalog::Service;
use opsdeck::config::HistorySettings;
use opsdeck::tui::app::{Focus, Popup};
use opsdeck::tui::harness::Harness;
use serde_json::{json, Value};

/// A console on the tab of `service`, its first list loaded, drawn `width` x `height`.
async fn console_on(service: Service, width: u16, height: u16) -> Harness {
    let mut h = Harness::new().await;
    h.resize(width, height);
    let index = Service::ALL.iter().position(|s| *s == service).unwrap();
    h.keys(&(index + 1).to_string());
    h.settle().await;
    assert_eq!(h.console.app.tab().service, service);
    h
}

/// The browser's header line: the line under its title that starts with the first column.
fn browser_header(screen: &str, first_column: &str) -> String {
    screen.lines().find(|l| l.contains(&format!("││{first_column} "))).unwrap_or_default().to_owned()
}

/// A time as the console writes every time: `2026-11-26 13:19:15`.
fn is_one_format(text: &str) -> bool {
    let b = text.as_bytes();
    b.len() == 19
        && b.iter().enumerate().all(|(i, c)| match i {
            4 | 7 => *c == b'-',
            10 => *c == b' ',
            13 | 16 => *c == b':',
            _ => c.is_ascii_digit(),
        })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_200_columns_an_email_address_is_not_cut_to_13_characters() {
    let mut h = console_on(Service::Mailgun, 200, 50).await;
    let failure = |n: u32, to: &str| {
        json!({"id": format!("ev{n}"), "event": "failed", "timestamp": 1_764_160_000.5 + f64::from(n), "recipient": to,
            "severity": "permanent", "reason": "bounce",
            "delivery-status": {"code": 550, "description": "No such mailbox"},
            "message": {"headers": {"subject": format!("Your invoice for November is ready ({n})"),
                "from": "Operations Team <operations.team@mg.example.com>"}}})
    };
    let records = vec![
        failure(1, "li.wei@example.org"),
        failure(2, "jane@example.com"),
        failure(3, "a.very.long.address@example.com"),
    ];
    let layout = opsdeck::tui::services::layout(Service::Mailgun.operation("events_list").unwrap());
    h.console.app.tabs[h.console.app.active].browser.set_records_as(records, Some("id"), layout);
    let screen = h.screen();
    for address in ["li.wei@example.org", "jane@example.com"] {
        assert!(screen.contains(address), "{address} whole at 200 columns:\n{screen}");
    }
    // The long one is cut, but to far more than 13 characters.
    assert!(screen.contains("a.very.long.address@exam"), "{screen}");
    assert!(screen.contains("2025-11-26 12:26:41"), "the time, whole:\n{screen}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ably_stats_leave_out_the_columns_the_same_in_every_row() {
    let mut h = console_on(Service::Ably, 200, 50).await;
    h.browse("stats").await;
    let screen = h.screen();
    let header = browser_header(&screen, "intervalId");
    assert!(header.contains("messages.all.all"), "{screen}");
    for constant in ["schema", "unit", "appId"] {
        assert!(!header.contains(constant), "{constant} is the same in every row:\n{screen}");
    }
    assert!(screen.contains("schema: \"https://schemas.ably.com"), "the inspector still has it:\n{screen}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_plain_text_message_does_not_collapse_the_message_columns() {
    let mut h = console_on(Service::Ably, 200, 50).await;
    // A plain-text message on the seeded channel of alerts, whose others carry objects: it is
    // the newest, so the first record of the page.
    let ably = h.console.sandbox.base_url(Service::Ably);
    let published = reqwest::Client::new()
        .post(format!("{ably}/channels/alerts:ops/messages"))
        .basic_auth(opsdeck::sandbox::credentials::ABLY_KEY_NAME, Some(opsdeck::sandbox::credentials::ABLY_KEY_SECRET))
        .header("content-type", "application/json")
        .body(json!({"name": "greeting", "data": "hello plain text"}).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(published.status().as_u16(), 201);
    h.browse("messages").await;
    let records = h.console.app.tab().browser.records();
    assert_eq!(records[0]["data"], "hello plain text", "the plain message is first");
    let screen = h.screen();
    let header = browser_header(&screen, "id");
    for column in ["timestamp", "name", "service", "severity"] {
        assert!(header.contains(column), "{column} in:\n{screen}");
    }
    assert!(!header.contains(" data ") && !screen.contains("{…"), "{screen}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mailgun_rfc_2822_dates_read_like_every_other_time() {
    let mut h = console_on(Service::Mailgun, 200, 50).await;
    let screen = h.screen();
    let record = h.console.app.tab().browser.records()[0].clone();
    assert!(record["created_at"].as_str().unwrap().ends_with(" GMT"), "the simulator writes RFC 2822: {record}");
    let row = screen.lines().find(|l| l.contains("││sandbox5f1e8a2b.mailgun.org ")).unwrap();
    let cell = row.split("mailgun.org").nth(1).unwrap().trim_start();
    assert!(is_one_format(&cell[..19]), "{row}");
    assert!(!row.contains("GMT"), "{row}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_stats_chart_at_80x24_has_whole_axis_labels_and_a_partial_last_minute() {
    let mut h = console_on(Service::Ably, 80, 24).await;
    h.browse("stats").await;
    assert!(h.console.app.chart().is_some(), "stats get a chart");
    let screen = h.screen();
    let lines: Vec<&str> = screen.lines().collect();
    // The axis labels are on the line above the chart's bottom border.
    let bottom = lines.iter().rposition(|l| l.contains("└")).unwrap();
    let axis = lines[bottom - 1];
    let chart_part = axis.split("││").nth(1).unwrap_or(axis);
    let labels: Vec<&str> = chart_part.split(['│', ' ']).filter(|w| !w.is_empty()).collect();
    assert!(labels.len() >= 2, "{screen}");
    for label in &labels {
        // A time `HH:MM`, or the `MM-DD` date the axis puts before it when the range crosses
        // midnight.
        let b = label.as_bytes();
        let whole = b.len() == 5 && matches!(b[2], b':' | b'-') && b.iter().filter(|c| c.is_ascii_digit()).count() == 4;
        assert!(whole, "{label:?} is a whole time, not a cut one:\n{screen}");
    }
    // The minute still counting (marked so, as Ably marks it) is drawn partial, and said.
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    let minute = |back: i64| {
        let at = time::OffsetDateTime::from_unix_timestamp(now - now % 60 - 60 * back).unwrap();
        format!("{}-{:02}-{:02}:{:02}:{:02}", at.year(), u8::from(at.month()), at.day(), at.hour(), at.minute())
    };
    let records: Vec<Value> = (0..30)
        .map(|back| {
            let mut record = json!({"intervalId": minute(back), "unit": "minute", "entries": {"messages.all.all.count": 100 + back % 7}});
            if back == 0 {
                record["inProgress"] = json!(format!("{}:30", minute(0)));
            }
            record
        })
        .collect();
    let series = opsdeck::tui::components::chart::detect(&records).unwrap();
    h.console.app.tabs[0].chart = Some(opsdeck::tui::components::chart::ChartView::new(series));
    let screen = h.screen();
    assert!(screen.contains("○ partial"), "{screen}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_history_has_one_time_column_and_says_1_call() {
    let data = std::env::temp_dir().join(format!("opsdeck-views-history-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&data);
    std::fs::create_dir_all(&data).unwrap();
    let mut h = Harness::new().await;
    let recorder = opsdeck::history::Recorder::start(Some(&data.join("history.sqlite")), &HistorySettings::default());
    h.console.app.history = recorder.unwrap();
    h.console.app.focus = Focus::Browser;
    h.keys("r");
    h.settle().await;
    assert!(h.console.app.history.as_ref().unwrap().flush(Duration::from_secs(5)));
    h.keys("H");
    let screen = h.screen();
    assert!(screen.contains("history · 1 of 1 call "), "{screen}");
    let header = screen.lines().find(|l| l.contains("OPERATION")).unwrap();
    assert_eq!(header.matches("TIME").count(), 0, "no two TIME columns: {header}");
    assert!(header.contains("WHEN (UTC)") && header.contains("TOOK"), "{header}");
    let row = screen.lines().find(|l| l.contains("SANDBOX  ably")).unwrap_or_else(|| panic!("{screen}"));
    let at = row.find("20").unwrap_or_else(|| panic!("{screen}"));
    assert!(is_one_format(&row[at..at + 19]), "{row}");
    let _ = std::fs::remove_dir_all(&data);
}

/// The words of a screen in one line, borders left out, so a message wrapped in a box reads
/// as one.
fn words(screen: &str) -> String {
    let text: String = screen.chars().map(|c| if "│┌┐└┘─".contains(c) { ' ' } else { c }).collect();
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The faults the embedded sandbox's control port has.
async fn faults(control: &str) -> Vec<Value> {
    let body: Value =
        serde_json::from_slice(&reqwest::get(format!("{control}/faults")).await.unwrap().bytes().await.unwrap())
            .unwrap();
    body["faults"].as_array().unwrap().clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn faults_are_added_and_cleared_from_the_sandbox_view() {
    let mut h = Harness::new().await;
    let control = h.console.app.embedded_control.clone().unwrap();
    h.keys("S");
    h.settle().await;
    let screen = h.screen();
    assert!(
        screen.contains("active faults (0)") && screen.contains("a add · j k select · x clear · X clear all"),
        "{screen}"
    );
    // a: the form, its kind first (an error status, 503), then the path.
    h.keys("a");
    let screen = h.screen();
    assert!(screen.contains("add a fault to Ably") && screen.contains("‹ error status ›"), "{screen}");
    h.keys("<Tab><C-u>/time<Enter>");
    h.settle().await;
    let screen = h.screen();
    for text in ["active faults (1)", "/time", "status 503", "added fault 1: status 503 on ably /time"] {
        assert!(screen.contains(text), "{text} in:\n{screen}");
    }
    assert!(!screen.contains("add a fault to"), "the form closed:\n{screen}");
    let added = faults(&control).await;
    assert_eq!((added.len(), &added[0]["path"], &added[0]["status"]), (1, &json!("/time"), &json!(503)));
    // The fault is real: the console's own call to /time fails with it.
    h.keys("<Esc>:ably time_get<Enter><C-s>");
    h.settle().await;
    assert!(h.screen().contains("503"), "{}", h.screen());
    // A latency fault for two requests, on every path of the service.
    h.keys("Sa<Right><Down><Down><Down><C-u>250<Down>2<Enter>");
    h.settle().await;
    let screen = h.screen();
    assert!(
        screen.contains("active faults (2)") && screen.contains("+250 ms") && screen.contains("2 left"),
        "{screen}"
    );
    let latency = faults(&control).await;
    assert_eq!(
        (&latency[1]["latency_ms"], &latency[1]["remaining"], &latency[1]["path"]),
        (&json!(250), &json!(2), &json!("*"))
    );
    // x clears the selected one (the first), X the rest.
    h.keys("x");
    h.settle().await;
    let screen = h.screen();
    assert!(screen.contains("cleared fault 1") && screen.contains("active faults (1)"), "{screen}");
    assert_eq!(faults(&control).await.len(), 1);
    h.keys("X");
    h.settle().await;
    let screen = h.screen();
    assert!(screen.contains("cleared 1 fault") && screen.contains("active faults (0)"), "{screen}");
    assert!(faults(&control).await.is_empty());
    // ? lists the view's keys in it.
    h.keys("?");
    let screen = h.screen();
    assert!(screen.contains("clear the selected fault") && screen.contains("clear every fault"), "{screen}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_fault_is_said_in_the_view_and_nothing_panics() {
    let mut h = Harness::new().await;
    let control = h.console.app.embedded_control.clone().unwrap();
    h.keys("S");
    h.settle().await;
    // A value that is no number is caught before anything is sent.
    h.keys("a<Down><Down><Down><C-u>5x3<Enter>");
    let screen = h.screen();
    assert!(screen.contains("status: 5x3 is not a whole number"), "{screen}");
    // The control port's refusal is shown in the form, which stays to be put right.
    h.keys("<C-u>503<Down><Down><Down>2<Enter>");
    h.settle().await;
    let screen = h.screen();
    assert!(
        words(&screen).contains("answered 400 Bad Request: probability 2 must be greater than 0 and at most 1"),
        "{screen}"
    );
    assert!(screen.contains("add a fault to Ably"), "{screen}");
    assert!(faults(&control).await.is_empty());
    h.keys("<BS>0.5<Enter>");
    h.settle().await;
    assert_eq!(faults(&control).await.len(), 1);
    assert!(h.screen().contains("p=0.5"), "{}", h.screen());
    // x with nothing selected to clear, after X: said, nothing sent.
    h.keys("X");
    h.settle().await;
    h.keys("x");
    assert!(h.screen().contains("no fault to clear"), "{}", h.screen());
    // A control port that is gone: the view says so, in the view.
    h.keys("<Esc>");
    h.console.app.embedded_control = Some("http://127.0.0.1:9".into());
    h.keys("S");
    h.settle().await;
    h.keys("a<Enter>");
    h.settle().await;
    let screen = h.screen();
    assert!(words(&screen).contains("cannot reach http://127.0.0.1:9/faults"), "{screen}");
    assert!(matches!(h.console.app.popup, Some(Popup::Sandbox(_))));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_simulators_stats_chart_unasked_and_transactions_do_not() {
    use opsdeck::tui::components::chart::worth_auto_chart;
    let mut h = console_on(Service::Ably, 200, 50).await;
    h.browse("stats").await;
    let stats = h.console.app.tab().browser.records();
    assert!(stats.len() > 10 && worth_auto_chart(&stats), "Ably stats are a series");
    let avatax = h.console.sandbox.base_url(Service::Avatax);
    let page: Value = serde_json::from_slice(
        &reqwest::Client::new()
            .get(format!("{avatax}/api/v2/companies/DEFAULT/transactions"))
            .basic_auth("1100000001", Some("SANDBOXLICENSEKEY"))
            .send()
            .await
            .unwrap()
            .bytes()
            .await
            .unwrap(),
    )
    .unwrap();
    let transactions = page["value"].as_array().unwrap();
    assert!(transactions.len() > 2 && transactions[0]["totalAmount"].is_number(), "{page}");
    assert!(opsdeck::tui::components::chart::detect(transactions).is_some(), "`c` can still chart them");
    assert!(!worth_auto_chart(transactions), "transactions with a totalAmount are no series to show unasked");
}

/// What the screen shows outside the inspector (which keeps every value as the server wrote
/// it): the browser, the chart, a view over them (which covers the inspector), the status line.
fn screen_outside_inspector(h: &mut Harness) -> String {
    h.screen();
    let inspector = h.console.app.areas.inspector;
    let popup = matches!(h.console.app.popup, Some(Popup::Detail(_)));
    let buffer = h.buffer();
    let area = buffer.area;
    (0..area.height)
        .map(|y| {
            (0..area.width)
                .map(|x| {
                    let hidden = !popup
                        && (inspector.x..inspector.x + inspector.width).contains(&x)
                        && (inspector.y..inspector.y + inspector.height).contains(&y);
                    if hidden {
                        " "
                    } else {
                        buffer[(x, y)].symbol()
                    }
                })
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every time on `screen` written in a layout other than the console's one
/// (`2026-11-26 13:19:15`): ISO 8601 with its `T`, RFC 2822, Ably's interval ids, a time
/// without its seconds, a bare epoch.
fn other_time_layouts(screen: &str) -> Vec<String> {
    let patterns = [
        r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}\S*",
        r"(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{1,2} [A-Z][a-z]{2} \d{4}[^│]*",
        r"\d{4}-\d{2}-\d{2}:\d{2}\S*",
        r"(^|[^\d.])(1[5-9]\d{8}(\d{3})?)($|[^\d.])",
    ];
    let mut found: Vec<String> = patterns
        .iter()
        .flat_map(|p| {
            regex_lite::Regex::new(p).unwrap().find_iter(screen).map(|m| m.as_str().to_owned()).collect::<Vec<_>>()
        })
        .collect();
    let minutes = regex_lite::Regex::new(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}(:\d{2})?").unwrap();
    found.extend(minutes.captures_iter(screen).filter(|c| c.get(1).is_none()).map(|c| c[0].to_owned()));
    found
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_list_and_view_of_every_service_writes_times_one_way() {
    let mut problems = Vec::new();
    for service in Service::ALL {
        let mut h = console_on(service, 200, 50).await;
        let resources = h.console.app.tab().resources.clone();
        for resource in resources {
            h.console.app.popup = None;
            h.browse(resource).await;
            let mut seen = vec![(format!("{service:?} {resource}"), screen_outside_inspector(&mut h))];
            if h.console.app.tab().browser.row_count() > 0 && h.console.app.popup.is_none() {
                h.console.app.focus = Focus::Browser;
                h.keys("<Enter>");
                h.settle().await;
                seen.push((format!("{service:?} {resource}, a row opened"), screen_outside_inspector(&mut h)));
            }
            for (place, screen) in seen {
                let found = other_time_layouts(&screen);
                if !found.is_empty() {
                    problems.push(format!("{place}: {found:?}\n{screen}"));
                }
            }
        }
    }
    // Ably's server time is an answer of its own, a bare epoch in milliseconds.
    let mut h = console_on(Service::Ably, 200, 50).await;
    h.keys(":ably time_get<Enter><C-s>");
    h.settle().await;
    let screen = screen_outside_inspector(&mut h);
    let found = other_time_layouts(&screen);
    if !found.is_empty() {
        problems.push(format!("ably time_get: {found:?}\n{screen}"));
    }
    if !regex_lite::Regex::new(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}").unwrap().is_match(&screen) {
        problems.push(format!("ably time_get shows no time:\n{screen}"));
    }
    assert!(problems.is_empty(), "{} places:\n{}", problems.len(), problems.join("\n\n"));
}

/// Every place on `screen` where `value` starts and is not shown whole: each must end in `…`.
fn silent_cuts(screen: &str, value: &str) -> Vec<String> {
    let head: String = value.chars().take(6).collect();
    let mut cuts = Vec::new();
    for line in screen.lines() {
        for (at, _) in line.match_indices(&head) {
            let shown: String = line[at..].chars().take(value.chars().count()).collect();
            if shown == value {
                continue;
            }
            let kept = shown.chars().take_while(|c| *c != '…').count();
            let ok = shown.chars().nth(kept) == Some('…') && value.starts_with(&shown[..shown.find('…').unwrap()]);
            if !ok || kept == 0 {
                cuts.push(format!("{shown:?} in {line:?}"));
            }
        }
    }
    cuts
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cell_a_title_or_a_status_that_does_not_fit_ends_in_an_ellipsis() {
    let hold = "0f8fad5b-d9cb-469f-a165-70867728950e";
    let email = "ada@opsdeck.example";
    let records: Vec<Value> = (0..3)
        .map(|n| {
            json!({"id": format!("{n}{}", &hold[1..]), "email": email, "comment": "a note long enough to be cut somewhere",
                "scopes": "member admin owner", "created": "2026-11-26T13:19:15Z"})
        })
        .collect();
    let mut problems = Vec::new();
    for width in [60, 80, 100, 120] {
        let mut h = console_on(Service::Deepgram, width, 24).await;
        let tab = &mut h.console.app.tabs[h.console.app.active];
        tab.browser.set_records(records.clone(), Some("id"));
        tab.browser.title = format!("holds of {hold} and of a long account name");
        tab.browser.page_label = "page 1 · 3 rows".into();
        let status =
            "deepgram keys_get: 404 Not Found: key 7c9e6679-7425-40de-944b-e07fc1f90ae7 is not in project 3b1f";
        tab.say(status.to_owned(), opsdeck::tui::tab::Severity::Error);
        let screen = h.screen();
        for value in [&format!("0{}", &hold[1..]), email, status] {
            problems.extend(silent_cuts(&screen, value).into_iter().map(|cut| format!("{width}: {cut}")));
        }
        if !screen.contains("page 1 · 3 rows") {
            problems.push(format!("{width}: the title lost its row count:\n{screen}"));
        }
        // The inspector's tree too: a project's id cut at the pane's edge is marked, and `y`
        // on it copies the whole id.
        let project: Value = serde_json::from_slice(&h.console.app.tab().inspector.view().unwrap().body).unwrap();
        let project_id = project["projects"][0]["project_id"].as_str().unwrap().to_owned();
        problems.extend(silent_cuts(&screen, &project_id).into_iter().map(|cut| format!("{width}: {cut}")));
        h.console.app.focus = Focus::Inspector;
        for _ in 0..6 {
            if h.console.app.tab().inspector.copy_text().as_deref() == Some(&project_id) {
                break;
            }
            h.keys("j");
        }
        h.keys("y");
        assert_eq!(h.console.app.clipboard.as_deref(), Some(project_id.as_str()), "y copies the whole id");
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
