//! Rate tables a user brings (issue 30): Avalara's ZIP5 tables loaded by `opsdeck sandbox
//! --tax-rates`, `OPSDECK_TAX_RATES` or the config's `[sandbox] tax_rates`, for `opsdeck sandbox`,
//! `opsdeck call` and the console's embedded simulators; without them a ZIP is taxed at its
//! state's base rate and the answer says so.

#![allow(clippy::unwrap_used, reason = "a test panics on failure")]

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use opsdeck::args::GlobalArgs;
use opsdeck::catalog::Service;
use opsdeck::config::Config;
use opsdeck::sandbox::credentials::{AVATAX_ACCOUNT_ID, AVATAX_LICENSE_KEY, TAXJAR_TOKEN};
use opsdeck::shared_data;
use serde_json::Value;

const NY_HEADER: &str = "State,ZipCode,TaxRegionName,EstimatedCombinedRate,StateRate,EstimatedCountyRate,\
                         EstimatedCityRate,EstimatedSpecialRate,RiskLevel";

/// A folder holding one Avalara-style New York table with JFK's ZIP (and `extra` rows after it).
fn ny_folder(name: &str, extra: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("opsdeck-tax-tables-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let text = format!("{NY_HEADER}\nNY,11430,NEW YORK CITY,0.08875,0.04,0,0.045,0.00375,1\n{extra}");
    std::fs::write(dir.join("TAXRATES_ZIP5_NY202602.csv"), text).unwrap();
    dir
}

fn opsdeck(args: &[&str], env: &[(&str, &str)]) -> Output {
    let scratch = std::env::temp_dir().join(format!("opsdeck-tax-tables-scratch-{}", std::process::id()));
    let mut command = Command::new(env!("CARGO_BIN_EXE_opsdeck"));
    command.args(args).env_clear().env("OPSDECK_DATA_DIR", &scratch).env("OPSDECK_STATE_DIR", &scratch);
    command.env("OPSDECK_CONFIG_DIR", &scratch).env("OPSDECK_SANDBOX_PORT_BASE", "off");
    command.envs(env.iter().copied());
    command.output().unwrap()
}

/// A running `opsdeck sandbox` and its banner, read up to "Ctrl-C stops." (or its exit).
struct SandboxProcess {
    child: std::process::Child,
    banner: String,
}

impl SandboxProcess {
    fn start(extra: &[&str]) -> SandboxProcess {
        let scratch = std::env::temp_dir().join(format!("opsdeck-tax-tables-scratch-{}", std::process::id()));
        let mut child = Command::new(env!("CARGO_BIN_EXE_opsdeck"))
            .args(["sandbox", "--port-base", "0"])
            .args(extra)
            .env_clear()
            .env("OPSDECK_CONFIG_DIR", &scratch)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut stdout = child.stdout.take().unwrap();
        let mut banner = String::new();
        let mut chunk = [0u8; 4096];
        // Waits for the banner's last line; the deadline only stops a sandbox that never says it.
        let deadline = Instant::now() + Duration::from_secs(60);
        while !banner.contains("Ctrl-C stops.") && Instant::now() < deadline {
            match stdout.read(&mut chunk) {
                Ok(0) | Err(_) => break,
                Ok(n) => banner.push_str(&String::from_utf8_lossy(&chunk[..n])),
            }
        }
        SandboxProcess { child, banner }
    }

    /// The base URL the banner's table gives `service`.
    fn url(&self, service: &str) -> String {
        let line = self.banner.lines().find(|l| l.split_whitespace().next() == Some(service)).unwrap();
        line.split_whitespace().nth(1).unwrap().to_owned()
    }

    fn control(&self) -> String {
        let first = self.banner.lines().next().unwrap();
        first.rsplit("control ").next().unwrap().trim().to_owned()
    }
}

impl Drop for SandboxProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// TaxJar's and AvaTax's answers for ZIP 11430 from the simulators at these base URLs.
async fn rates_of_11430(taxjar: &str, avatax: &str) -> (Value, Value) {
    let http = reqwest::Client::builder().no_proxy().build().unwrap();
    let taxjar = http.get(format!("{taxjar}/v2/rates/11430")).bearer_auth(TAXJAR_TOKEN).send().await.unwrap();
    assert_eq!(taxjar.status(), 200);
    let avatax = http
        .get(format!("{avatax}/api/v2/taxrates/bypostalcode?country=US&postalCode=11430"))
        .basic_auth(AVATAX_ACCOUNT_ID, Some(AVATAX_LICENSE_KEY))
        .send()
        .await
        .unwrap();
    assert_eq!(avatax.status(), 200);
    (json(taxjar).await, json(avatax).await)
}

async fn control_index(control: &str) -> Value {
    let http = reqwest::Client::builder().no_proxy().build().unwrap();
    json(http.get(format!("{control}/")).send().await.unwrap()).await
}

async fn json(response: reqwest::Response) -> Value {
    serde_json::from_slice(&response.bytes().await.unwrap()).unwrap()
}

#[tokio::test]
async fn opsdeck_sandbox_with_avalaras_tables_answers_jfk_at_the_city_rate() {
    let Some(tables) = shared_data::ZIP5_TABLES.for_test("opsdeck_sandbox_with_avalaras_tables") else { return };
    let sandbox = SandboxProcess::start(&["--tax-rates", tables.to_str().unwrap()]);
    assert!(
        sandbox.banner.contains("tax tables: Avalara ZIP5 tables 2026-02: 51 files, 40,677 ZIPs ("),
        "{}",
        sandbox.banner
    );
    let (taxjar, avatax) = rates_of_11430(&sandbox.url("taxjar"), &sandbox.url("avatax")).await;
    assert_eq!(taxjar["rate"]["combined_rate"], "0.08875", "{taxjar}");
    assert_eq!(taxjar["rate"]["city_rate"], "0.045", "{taxjar}");
    assert!(taxjar["rate"].get("opsdeck_state_fallback").is_none(), "{taxjar}");
    assert_eq!(avatax["totalRate"].as_f64(), Some(0.08875), "{avatax}");
    assert!(avatax.get("messages").is_none(), "{avatax}");
    let index = control_index(&sandbox.control()).await;
    let zip5 = &index["tax_tables"]["zip5"];
    assert_eq!((zip5["files"].as_u64(), zip5["zips"].as_u64()), (Some(51), Some(40_677)), "{index}");
    assert_eq!(zip5["months"], serde_json::json!(["2026-02"]));
}

#[tokio::test]
async fn opsdeck_sandbox_without_tables_answers_the_state_rate_and_says_so() {
    let sandbox = SandboxProcess::start(&[]);
    assert!(sandbox.banner.contains("tax tables: built-in: a ZIP other than"), "{}", sandbox.banner);
    let (taxjar, avatax) = rates_of_11430(&sandbox.url("taxjar"), &sandbox.url("avatax")).await;
    assert_eq!(taxjar["rate"]["combined_rate"], "0.04", "{taxjar}");
    assert_eq!(taxjar["rate"]["opsdeck_state_fallback"], true, "{taxjar}");
    assert_eq!(avatax["totalRate"].as_f64(), Some(0.04), "{avatax}");
    assert_eq!(avatax["messages"][0]["summary"], "Only the state rate is known for this postal code.", "{avatax}");
    let index = control_index(&sandbox.control()).await;
    assert!(index["tax_tables"]["zip5"].is_null(), "{index}");
    assert!(index["tax_tables"]["in_force"].as_str().unwrap().starts_with("built-in"), "{index}");
}

#[test]
fn a_bad_table_stops_the_sandbox_with_file_line_and_reason() {
    let bad = ny_folder("bad", "NY,10002,NEW YORK CITY,0.08875,0.04,0,0.045,0,1\n");
    let out = opsdeck(&["sandbox", "--port-base", "0", "--tax-rates", bad.to_str().unwrap()], &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("the tax rate tables of --tax-rates cannot be loaded: "), "{err}");
    assert!(err.contains("TAXRATES_ZIP5_NY202602.csv:3: the parts add up to 0.085"), "{err}");
    let missing = bad.join("nothing-here");
    let out = opsdeck(&["sandbox", "--port-base", "0"], &[("OPSDECK_TAX_RATES", missing.to_str().unwrap())]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("the tax rate tables of OPSDECK_TAX_RATES cannot be loaded: ") && err.contains("nothing-here")
    );
    let _ = std::fs::remove_dir_all(&bad);
}

#[test]
fn opsdeck_call_reads_the_tables_from_the_variable_and_the_config() {
    let dir = ny_folder("call", "");
    let rate = |out: &Output| -> Value {
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice::<Value>(&out.stdout).unwrap()["rate"]["combined_rate"].clone()
    };
    let call = ["call", "taxjar", "rates_get", "zip=11430"];
    assert_eq!(rate(&opsdeck(&call, &[])), "0.04");
    assert_eq!(rate(&opsdeck(&call, &[("OPSDECK_TAX_RATES", dir.to_str().unwrap())])), "0.08875");
    // The config's path is taken from the config file's folder.
    let config = dir.join("config.toml");
    std::fs::write(&config, "[sandbox]\ntax_rates = \"TAXRATES_ZIP5_NY202602.csv\"\n").unwrap();
    let with_config = ["--config", config.to_str().unwrap(), "call", "taxjar", "rates_get", "zip=11430"];
    assert_eq!(rate(&opsdeck(&with_config, &[])), "0.08875");
    // A call to a service that taxes nothing does not read them, even when they are broken.
    let broken = [("OPSDECK_TAX_RATES", "/nonexistent/tables")];
    assert!(opsdeck(&["call", "ably", "time_get"], &broken).status.success());
    let refused = opsdeck(&call, &broken);
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("/nonexistent/tables"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn the_consoles_embedded_simulators_tax_with_the_configured_tables() {
    let dir = ny_folder("console", "");
    let env_with = |path: &Path| {
        let path = path.to_str().unwrap().to_owned();
        move |name: &str| (name == "OPSDECK_TAX_RATES").then(|| path.clone())
    };
    let console = opsdeck::tui::start_with(Config::default(), &env_with(&dir), &GlobalArgs::default()).await.unwrap();
    let sandbox = &console.sandbox;
    let (taxjar, avatax) = rates_of_11430(&sandbox.base_url(Service::Taxjar), &sandbox.base_url(Service::Avatax)).await;
    assert_eq!(taxjar["rate"]["combined_rate"], "0.08875", "{taxjar}");
    assert_eq!(avatax["totalRate"].as_f64(), Some(0.08875), "{avatax}");
    assert!(sandbox.tax_tables_line().starts_with("Avalara ZIP5 tables 2026-02: 1 file, 1 ZIP ("));
    sandbox.shutdown();
    let broken = dir.join("missing.csv");
    let error = opsdeck::tui::start_with(Config::default(), &env_with(&broken), &GlobalArgs::default())
        .await
        .err()
        .unwrap()
        .to_string();
    assert!(
        error.contains("the tax rate tables of OPSDECK_TAX_RATES cannot be loaded") && error.contains("missing.csv")
    );
    let _ = std::fs::remove_dir_all(&dir);
}
