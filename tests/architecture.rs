//! The shape of the code, read from its own source: imports run one way between the layers
//! (catalog ← client / sandbox ← config ← history ← cli / tui), no module imports its way back
//! to itself at any depth, and the console's generic parts name no service: what a service
//! shows differently lives in `src/tui/services/`, found through one registry.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A module path from the crate root: `["tui", "components", "browser"]`.
type ModulePath = Vec<String>;

/// Every source file of the crate with its module path and its text without test modules
/// (tests may reach anywhere).
fn sources() -> Vec<(ModulePath, PathBuf, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    let mut stack = vec![root.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("src is readable") {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let relative = path.strip_prefix(&root).expect("under src").with_extension("");
                let mut module: ModulePath =
                    relative.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
                if module.last().is_some_and(|m| m == "mod" || m == "lib" || m == "main") {
                    module.pop();
                }
                let name = module.last().cloned().unwrap_or_default();
                if name == "tests" || name.ends_with("_tests") || name == "harness" {
                    continue;
                }
                let text = std::fs::read_to_string(&path).expect("source is readable");
                files.push((module, path, without_tests(&text)));
            }
        }
    }
    files.sort();
    files
}

/// The text before the first `#[cfg(test)]` item: by convention test modules come last.
fn without_tests(text: &str) -> String {
    let code = text.find("#[cfg(test)]").map_or(text, |at| &text[..at]);
    // Doc comments and comments may mention any module; only code imports.
    code.lines()
        .map(|line| match line.find("//") {
            Some(at) if !line[..at].contains('"') => &line[..at],
            _ => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The module paths a text names: `crate::a::b::c`, `super::x`, `self::x`, as written.
fn named_paths(module: &ModulePath, text: &str) -> Vec<ModulePath> {
    let mut found = Vec::new();
    let bytes = text.as_bytes();
    for (prefix, base) in [
        ("crate::", Vec::new()),
        ("super::", module[..module.len().saturating_sub(1)].to_vec()),
        ("self::", module.clone()),
    ] {
        let mut from = 0;
        while let Some(at) = text[from..].find(prefix) {
            let start = from + at;
            from = start + prefix.len();
            let before = start.checked_sub(1).map(|i| bytes[i]);
            if before.is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b':') {
                continue;
            }
            let rest = &text[from..];
            let end = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':')).unwrap_or(rest.len());
            let mut path = base.clone();
            path.extend(rest[..end].split("::").filter(|s| !s.is_empty()).map(str::to_owned));
            found.push(path);
        }
    }
    found
}

/// The import graph between modules `depth` levels below `within`: an edge for each named
/// path that leads into another such module.
fn graph(within: &[&str], depth: usize) -> BTreeMap<String, BTreeSet<String>> {
    let files = sources();
    let known: BTreeSet<ModulePath> = files.iter().map(|(m, ..)| m.clone()).collect();
    let key = |path: &ModulePath| -> Option<String> {
        let inside = path.len() >= within.len() + depth && path[..within.len()].iter().eq(within.iter());
        inside.then(|| path[..within.len() + depth].join("/"))
    };
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (module, _, text) in &files {
        let Some(from) = key(module) else { continue };
        for named in named_paths(module, text) {
            // The longest prefix of the named path that is a module of the crate.
            let target = (1..=named.len())
                .rev()
                .map(|n| named[..n].to_vec())
                .find(|p| known.contains(p) || known.iter().any(|k| k.len() > p.len() && k[..p.len()] == p[..]));
            let Some(to) = target.as_ref().and_then(&key) else { continue };
            if to != from {
                edges.entry(from.clone()).or_default().insert(to);
            }
        }
    }
    edges
}

/// The circles of a graph: each strongly connected set of more than one module.
fn circles(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    let reach = |from: &String| {
        let mut seen = BTreeSet::new();
        let mut stack = vec![from.clone()];
        while let Some(node) = stack.pop() {
            for next in edges.get(&node).into_iter().flatten() {
                if seen.insert(next.clone()) {
                    stack.push(next.clone());
                }
            }
        }
        seen
    };
    let reaches: BTreeMap<&String, BTreeSet<String>> = edges.keys().map(|k| (k, reach(k))).collect();
    let mut found: Vec<Vec<String>> = Vec::new();
    for (node, reached) in &reaches {
        if !reached.contains(*node) {
            continue;
        }
        let mut circle: Vec<String> =
            reached.iter().filter(|other| reaches.get(other).is_some_and(|r| r.contains(*node))).cloned().collect();
        circle.sort();
        if !found.contains(&circle) {
            found.push(circle);
        }
    }
    found
}

fn described(edges: &BTreeMap<String, BTreeSet<String>>, circle: &[String]) -> String {
    circle
        .iter()
        .map(|m| {
            let to: Vec<&String> = edges.get(m).into_iter().flatten().filter(|t| circle.contains(t)).collect();
            format!("{m} → {to:?}")
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// Every folder of modules, at every depth: none may import its way back to itself.
#[test]
fn no_module_imports_its_way_back_to_itself() {
    let files = sources();
    let folders: BTreeSet<ModulePath> =
        files.iter().flat_map(|(m, ..)| (0..m.len()).map(|n| m[..n].to_vec()).collect::<Vec<_>>()).collect();
    let mut problems = Vec::new();
    for folder in &folders {
        let within: Vec<&str> = folder.iter().map(String::as_str).collect();
        let edges = graph(&within, 1);
        for circle in circles(&edges) {
            problems.push(described(&edges, &circle));
        }
    }
    assert!(folders.len() > 10, "the walk found the modules: {folders:?}");
    assert!(problems.is_empty(), "import circles:\n{}", problems.join("\n"));
}

/// The layers: a module may import its own layer's utilities and any layer below, never one
/// above. `cli` sits above `tui` (it asks the console's registry for `-o table`'s columns), and
/// `commands` (`opsdeck history`, `paths`) above `cli`, whose errors and arguments it uses.
#[test]
fn imports_run_down_the_layers() {
    const LAYERS: &[&[&str]] = &[
        &["inert", "paths", "format", "json_index", "jq", "clipboard", "args", "shared_data"],
        &["catalog"],
        &["client", "sandbox"],
        &["config"],
        &["history", "log", "table"],
        &["tui"],
        &["cli"],
        &["commands"],
        &["lib", "main"],
    ];
    let layer = |module: &str| LAYERS.iter().position(|layer| layer.contains(&module));
    let edges = graph(&[], 1);
    let mut problems = Vec::new();
    for (from, targets) in &edges {
        let from_layer = layer(from).unwrap_or_else(|| panic!("module {from} is in no layer: add it to LAYERS"));
        for to in targets {
            let to_layer = layer(to).unwrap_or_else(|| panic!("module {to} is in no layer: add it to LAYERS"));
            let same_utility = from_layer == 0 && to_layer == 0;
            let sideways = from_layer == to_layer && !same_utility;
            if to_layer > from_layer || sideways {
                problems.push(format!("{from} imports {to}"));
            }
        }
    }
    assert!(edges.contains_key("tui") && edges.contains_key("client"), "the graph was read: {edges:?}");
    assert!(problems.is_empty(), "imports against the layers:\n{}", problems.join("\n"));
}

/// What a generic part of the console must not say: a particular service (`Service::Mailgun`)
/// or a service's module. Those belong in `src/tui/services/`.
fn service_names(text: &str) -> Vec<String> {
    let services = ["Ably", "Deepgram", "Avatax", "Taxjar", "Coinbase", "Mailgun", "Easypost"];
    let modules =
        ["ably", "deepgram", "avatax", "taxjar", "coinbase", "mailgun", "easypost", "tax", "mail", "shipping"];
    let mut found = Vec::new();
    for service in services {
        let variant = format!("Service::{service}");
        if text.contains(&variant) {
            found.push(variant);
        }
    }
    for module in modules {
        for path in [format!("services::{module}"), format!("tui::{module}::"), format!("{module}::")] {
            let hit = text.match_indices(&path).any(|(at, _)| {
                at == 0 || !text.as_bytes()[at - 1].is_ascii_alphanumeric() && text.as_bytes()[at - 1] != b'_'
            });
            if hit && !found.contains(&path) {
                found.push(path);
            }
        }
    }
    found
}

#[test]
fn generic_console_parts_and_the_table_name_no_service() {
    let mut problems = Vec::new();
    let mut checked = 0;
    for (module, path, text) in sources() {
        let generic_console =
            module.first().is_some_and(|m| m == "tui") && module.get(1).is_none_or(|m| m != "services");
        let shared = ["table", "format"].iter().any(|m| module == [*m]);
        if !(generic_console || shared) {
            continue;
        }
        checked += 1;
        let names = service_names(&text);
        if !names.is_empty() {
            problems.push(format!("{}: {names:?}", path.display()));
        }
    }
    assert!(checked > 20, "the console's files were read ({checked})");
    assert!(
        problems.is_empty(),
        "generic code naming a service (move it to src/tui/services/):\n{}",
        problems.join("\n")
    );
}

/// The check itself catches what it is for: a browser that asks a service's module by name.
#[test]
fn the_name_check_sees_a_service_named() {
    assert_eq!(service_names("match op.service { Service::Mailgun => 1 }"), ["Service::Mailgun"]);
    assert_eq!(service_names("let t = mail::event_tone(text);"), ["mail::"]);
    assert!(service_names("services::console(service).layout(op)").is_empty());
    assert!(service_names("for service in Service::ALL {}").is_empty());
}

/// The circle finder finds a circle of three and none in a line.
#[test]
fn the_circle_check_sees_a_circle() {
    let edges = |pairs: &[(&str, &str)]| {
        let mut map: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (a, b) in pairs {
            map.entry((*a).into()).or_default().insert((*b).into());
        }
        map
    };
    assert_eq!(circles(&edges(&[("a", "b"), ("b", "c"), ("c", "a")])), [vec!["a", "b", "c"]]);
    assert!(circles(&edges(&[("a", "b"), ("b", "c")])).is_empty());
}
