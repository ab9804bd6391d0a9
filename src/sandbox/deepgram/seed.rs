//! The seeded account: two projects, each with an owner, an admin and members, a few keys
//! (their secrets never shown again, as on the real service), balances, and 45 days of usage:
//! transcription, speech and text analysis by day.

use std::collections::VecDeque;

use super::state::{Balance, Endpoint, Features, Key, Member, Project, State, Usage};
use crate::sandbox::rng::Rng;

const DAY_MS: i64 = 86_400_000;

pub fn seeded(seed: u64, anchor_ms: i64) -> State {
    let mut state = State::new(seed);
    let mut rng = Rng::new(seed ^ 0xDEE9_0A11);
    let people: [(&str, &str, &str, &str); 5] = [
        ("ada@opsdeck.example", "Ada", "Lovelace", "owner"),
        ("grace@opsdeck.example", "Grace", "Hopper", "admin"),
        ("alan@opsdeck.example", "Alan", "Turing", "member"),
        ("katherine@opsdeck.example", "Katherine", "Johnson", "member"),
        ("edsger@opsdeck.example", "Edsger", "Dijkstra", "owner"),
    ];
    let projects: [(&str, &str, &[usize], f64, u64); 2] = [
        ("Support calls", "opsdeck demo", &[0, 1, 2, 3], 187.25, 1),
        ("Voice assistant", "opsdeck demo", &[4, 0, 2], 42.10, 3),
    ];
    for (name, company, who, amount, scale) in projects {
        let id = state.ids.uuid();
        let members: Vec<Member> = who
            .iter()
            .map(|&i| {
                let (email, first, last, role) = people[i];
                Member {
                    id: state.ids.hex(32),
                    email: email.to_owned(),
                    first_name: first.to_owned(),
                    last_name: last.to_owned(),
                    scopes: vec![role.to_owned()],
                }
            })
            .collect();
        let keys = [
            ("production transcription", "member", 200),
            ("ci pipeline", "member", 90),
            ("ops admin key", "admin", 30),
        ]
        .iter()
        .enumerate()
        .map(|(i, (comment, role, age_days))| Key {
            id: state.ids.uuid(),
            secret: state.ids.hex(40),
            comment: (*comment).to_owned(),
            scopes: vec![(*role).to_owned()],
            tags: if i == 0 { vec!["prod".to_owned()] } else { Vec::new() },
            created_ms: anchor_ms - age_days * DAY_MS,
            expires_ms: (i == 1).then_some(anchor_ms + 180 * DAY_MS),
            member_id: members[i.min(members.len() - 1)].id.clone(),
            created_by: None,
        })
        .collect();
        let balances =
            vec![Balance { id: state.ids.uuid(), amount, units: "USD", purchase_order_id: state.ids.uuid() }];
        let mut usage = VecDeque::new();
        let models = ["nova-3", "nova-2-meeting", "nova-3"];
        for day in (1..=45).rev() {
            let at = anchor_ms - day * DAY_MS + 12 * 3_600_000;
            let requests = (rng.range(40, 160) as u64) * scale;
            let audio_seconds = requests as f64 * f64::from(u32::try_from(rng.range(30, 240)).unwrap_or(60));
            let &model = rng.pick(&models);
            usage.push_back(Usage {
                at_ms: at,
                endpoint: Endpoint::Listen,
                streaming: false,
                model,
                accessor: String::new(),
                tags: Box::new(["prod".into()]),
                features: if day % 2 == 0 {
                    Features::of(["diarize", "punctuate"])
                } else {
                    Features::of(["punctuate"])
                },
                requests,
                audio_seconds,
                characters: 0,
                tokens_in: 0,
                tokens_out: 0,
            });
            let speak_requests = rng.range(5, 40) as u64 * scale;
            usage.push_back(Usage {
                at_ms: at + 60_000,
                endpoint: Endpoint::Speak,
                streaming: false,
                model: "aura-2-thalia-en",
                accessor: String::new(),
                tags: Box::new([]),
                features: Features::default(),
                requests: speak_requests,
                audio_seconds: 0.0,
                characters: speak_requests * rng.range(80, 400) as u64,
                tokens_in: 0,
                tokens_out: 0,
            });
            let read_requests = rng.range(2, 20) as u64;
            usage.push_back(Usage {
                at_ms: at + 120_000,
                endpoint: Endpoint::Read,
                streaming: false,
                model: "read",
                accessor: String::new(),
                tags: Box::new([]),
                features: Features::of(["sentiment", "summarize"]),
                requests: read_requests,
                audio_seconds: 0.0,
                characters: 0,
                tokens_in: read_requests * 350,
                tokens_out: read_requests * 60,
            });
        }
        state.projects.push(Project {
            id,
            name: name.to_owned(),
            company: company.to_owned(),
            mip_opt_out: false,
            members,
            keys,
            balances,
            usage,
        });
    }
    state
}
