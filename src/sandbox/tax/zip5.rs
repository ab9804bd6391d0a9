//! Avalara's ZIP5 rate tables, as a user downloads them from Avalara: one CSV per state
//! (`TAXRATES_ZIP5_NY202602.csv`), or any one CSV in that layout. Columns are found by their header
//! names (`RiskLevel` and any column this does not know are ignored), so a file from another month
//! with its columns in another order still loads.
//!
//! A file is taken whole or not at all: the first bad row refuses the load with its file, line and
//! reason, and nothing of it is kept.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use rust_decimal::Decimal;

use super::table::{Table, Zip5Summary, ZipRow};

/// The files a folder is read from: Avalara's names for its per-state tables.
const FILE_PREFIX: &str = "TAXRATES_ZIP5_";

/// The most a file may hold: Avalara's largest state table (Texas) is under 200 KB.
const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;

/// How far the parts may be from the combined rate (Avalara rounds each part).
const PARTS_TOLERANCE: Decimal = Decimal::from_parts(1, 0, 0, false, 4);

/// Which tables a sandbox taxes with, in a line (its banner, its control port, the console).
pub fn tables_in_force(loaded: Option<&Zip5Summary>) -> String {
    match loaded {
        Some(summary) => format!("{}; other ZIPs at their state's base rate", summary.describe()),
        None => "built-in: a ZIP other than the vendors' documented examples is taxed at its state's base rate \
                 (load Avalara's ZIP5 tables with --tax-rates PATH or OPSDECK_TAX_RATES)"
            .to_owned(),
    }
}

/// The built-in tables with the ZIP5 tables at `path` (one CSV, or a folder of
/// `TAXRATES_ZIP5_*.csv`) added: a ZIP they list is taxed at its listed rates instead of its
/// state's base rate. The built-in ZIP rows (the vendors' documented examples) keep theirs.
pub fn load(path: &Path) -> Result<Table, String> {
    let builtin = super::table::shipped()?;
    let files = files_at(path)?;
    let mut rows = Vec::new();
    let mut seen: HashMap<String, (usize, usize)> = HashMap::new();
    let mut months = Vec::new();
    for (index, file) in files.iter().enumerate() {
        let text = read(file)?;
        let month = month_of(file);
        if let Some(month) = &month {
            if !months.contains(month) {
                months.push(month.clone());
            }
        }
        for (line, row) in parse(file, &text, builtin, month.as_deref())? {
            if let Some((first_file, first_line)) = seen.insert(row.zip.clone(), (index, line)) {
                return Err(format!(
                    "{}:{line}: ZIP {} is listed twice (first at {}:{first_line})",
                    file.display(),
                    row.zip,
                    files[first_file].display()
                ));
            }
            rows.push(row);
        }
    }
    let summary = Zip5Summary { path: path.to_owned(), files, zips: rows.len(), months };
    Ok(builtin.with_zip5(rows, summary))
}

/// One file, or a folder's `TAXRATES_ZIP5_*.csv` in name order.
fn files_at(path: &Path) -> Result<Vec<PathBuf>, String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if !meta.is_dir() {
        return Ok(vec![path.to_owned()]);
    }
    let entries = std::fs::read_dir(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut files = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| format!("{}: {e}", path.display()))?;
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let csv = Path::new(name.as_ref()).extension().is_some_and(|e| e.eq_ignore_ascii_case("csv"));
        if name.starts_with(FILE_PREFIX) && csv {
            files.push(entry.path());
        }
    }
    if files.is_empty() {
        return Err(format!("{}: no {FILE_PREFIX}*.csv files in this folder", path.display()));
    }
    files.sort();
    Ok(files)
}

fn read(file: &Path) -> Result<String, String> {
    let size = std::fs::metadata(file).map_err(|e| format!("{}: {e}", file.display()))?.len();
    if size > MAX_FILE_BYTES {
        return Err(format!(
            "{}: {size} bytes, more than a rate table holds ({MAX_FILE_BYTES} at most)",
            file.display()
        ));
    }
    let bytes = std::fs::read(file).map_err(|e| format!("{}: {e}", file.display()))?;
    String::from_utf8(bytes).map_err(|e| format!("{}: not UTF-8 text ({e})", file.display()))
}

/// `2026-02` from `TAXRATES_ZIP5_NY202602.csv`: the six digits before the extension.
fn month_of(file: &Path) -> Option<String> {
    let stem = file.file_stem()?.to_str()?;
    let digits = stem.get(stem.len().checked_sub(6)?..)?;
    let (year, month) = (digits.get(..4)?, digits.get(4..)?);
    let valid = digits.bytes().all(|b| b.is_ascii_digit()) && matches!(month.parse::<u8>(), Ok(1..=12));
    valid.then(|| format!("{year}-{month}"))
}

/// The columns a row is read from, by their place in the header.
struct Columns {
    state: usize,
    zip: usize,
    region: usize,
    combined: usize,
    state_rate: usize,
    county: usize,
    city: usize,
    special: usize,
}

impl Columns {
    fn find(file: &Path, header: &[String]) -> Result<Columns, String> {
        let at = |name: &str| {
            header.iter().position(|h| h.eq_ignore_ascii_case(name)).ok_or_else(|| {
                format!("{}:1: no `{name}` column (the header is `{}`)", file.display(), header.join(","))
            })
        };
        Ok(Columns {
            state: at("State")?,
            zip: at("ZipCode")?,
            region: at("TaxRegionName")?,
            combined: at("EstimatedCombinedRate")?,
            state_rate: at("StateRate")?,
            county: at("EstimatedCountyRate")?,
            city: at("EstimatedCityRate")?,
            special: at("EstimatedSpecialRate")?,
        })
    }
}

/// The rows of one file, each with its line number.
fn parse(file: &Path, text: &str, builtin: &Table, month: Option<&str>) -> Result<Vec<(usize, ZipRow)>, String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.lines().enumerate().filter(|(_, line)| !line.trim().is_empty());
    let Some((_, header)) = lines.next() else { return Err(format!("{}: empty", file.display())) };
    let header = fields(header).map_err(|why| format!("{}:1: {why}", file.display()))?;
    let columns = Columns::find(file, &header)?;
    let file_name = file.file_name().map_or_else(|| file.display().to_string(), |n| n.to_string_lossy().into_owned());
    let source = format!("Avalara ZIP5 rate table {file_name}");
    let date = month.map(|m| format!("{m}-01")).unwrap_or_default();
    let mut rows = Vec::new();
    for (index, line) in lines {
        let n = index + 1;
        let at = |why: String| format!("{}:{n}: {why}", file.display());
        let f = fields(line).map_err(at)?;
        if f.len() < header.len() {
            return Err(at(format!("{} fields, the header has {}", f.len(), header.len())));
        }
        let zip = f[columns.zip].as_str();
        if zip.len() != 5 || !zip.bytes().all(|b| b.is_ascii_digit()) {
            return Err(at(format!("ZipCode `{zip}` is not five digits")));
        }
        let state = f[columns.state].to_ascii_uppercase();
        if builtin.state(&state).is_none() {
            return Err(at(format!("State `{}` is not a US state or DC", f[columns.state])));
        }
        let rate = |column: usize, name: &str| fraction(&f[column]).map_err(|why| at(format!("{name} {why}")));
        let combined = rate(columns.combined, "EstimatedCombinedRate")?;
        let state_rate = rate(columns.state_rate, "StateRate")?;
        let county_rate = rate(columns.county, "EstimatedCountyRate")?;
        let city_rate = rate(columns.city, "EstimatedCityRate")?;
        let special = rate(columns.special, "EstimatedSpecialRate")?;
        let parts = state_rate + county_rate + city_rate + special;
        if (parts - combined).abs() > PARTS_TOLERANCE {
            return Err(at(format!(
                "the parts add up to {parts} (state {state_rate} + county {county_rate} + city {city_rate} + special \
                 {special}), not the combined rate {combined}"
            )));
        }
        let region = f[columns.region].clone();
        rows.push((
            n,
            ZipRow {
                zip: zip.to_owned(),
                state,
                county: region.clone(),
                city: region.clone(),
                state_rate,
                county_rate,
                city_rate,
                specials: if special.is_zero() { Vec::new() } else { vec![(format!("{region} SPECIAL"), special)] },
                source: source.clone(),
                date: date.clone(),
            },
        ));
    }
    Ok(rows)
}

/// A rate as Avalara writes it: a fraction from 0 to 1 (`0.08875`).
fn fraction(value: &str) -> Result<Decimal, String> {
    let parsed = Decimal::from_str(value).map_err(|_| format!("`{value}` is not a number"))?;
    if parsed < Decimal::ZERO || parsed > Decimal::ONE {
        return Err(format!("{value} is not a fraction between 0 and 1"));
    }
    Ok(parsed)
}

/// The fields of one CSV line, trimmed; a field may be in double quotes (`""` is a quote).
fn fields(line: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut chars = line.chars().peekable();
    loop {
        let mut field = String::new();
        while chars.peek().is_some_and(|c| *c == ' ' || *c == '\t') {
            chars.next();
        }
        if chars.peek() == Some(&'"') {
            chars.next();
            loop {
                match chars.next() {
                    Some('"') if chars.peek() == Some(&'"') => {
                        chars.next();
                        field.push('"');
                    }
                    Some('"') => break,
                    Some(c) => field.push(c),
                    None => return Err("a quoted field is not closed".to_owned()),
                }
            }
            while chars.peek().is_some_and(|c| *c != ',') {
                if chars.next().is_some_and(|c| !c.is_whitespace()) {
                    return Err("text after a quoted field".to_owned());
                }
            }
        } else {
            while let Some(c) = chars.next_if(|c| *c != ',') {
                field.push(c);
            }
        }
        out.push(field.trim().to_owned());
        if chars.next().is_none() {
            return Ok(out);
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "a test panics on failure")]

    use super::*;

    #[test]
    fn fields_split_on_commas_and_keep_quoted_ones_whole() {
        assert_eq!(fields("NY,10002,NEW YORK CITY,0.08875").unwrap(), ["NY", "10002", "NEW YORK CITY", "0.08875"]);
        assert_eq!(fields(r#"NY,"A, ""B""" ,1,"#).unwrap(), ["NY", r#"A, "B""#, "1", ""]);
        assert!(fields(r#"NY,"open"#).unwrap_err().contains("not closed"));
    }

    const HEADER: &str = "State,ZipCode,TaxRegionName,EstimatedCombinedRate,StateRate,EstimatedCountyRate,\
                          EstimatedCityRate,EstimatedSpecialRate,RiskLevel";

    /// A fresh folder holding `files` (name, text).
    fn folder(name: &str, files: &[(&str, &str)]) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("opsdeck-zip5-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        for (file, text) in files {
            std::fs::write(dir.join(file), text).unwrap();
        }
        dir
    }

    #[test]
    fn a_folder_of_state_tables_loads_and_its_zips_win_over_the_state_rate() {
        let ny = format!("{HEADER}\nNY,11430,NEW YORK CITY,0.08875,0.04,0,0.045,0.00375,1\n");
        let vt = format!("{HEADER}\r\nVT,05401,BURLINGTON,0.07,0.06,0,0.01,0,2\r\n");
        let dir = folder(
            "good",
            &[("TAXRATES_ZIP5_NY202602.csv", &ny), ("TAXRATES_ZIP5_VT202602.csv", &vt), ("notes.txt", "x")],
        );
        let table = load(&dir).unwrap();
        let summary = table.zip5.clone().unwrap();
        assert_eq!((summary.files.len(), summary.zips, summary.months.clone()), (2, 2, vec!["2026-02".to_owned()]));
        assert!(
            summary.describe().starts_with("Avalara ZIP5 tables 2026-02: 2 files, 2 ZIPs ("),
            "{}",
            summary.describe()
        );
        let jfk = table.rates(&super::super::Address::us("NY", "11430")).unwrap();
        assert_eq!((jfk.combined_rate, jfk.state_fallback), (Decimal::new(8875, 5), false));
        assert_eq!(jfk.source, "Avalara ZIP5 rate table TAXRATES_ZIP5_NY202602.csv");
        // One file in the same layout, columns in another order, an unknown column, no RiskLevel.
        let one = dir.join("mine.csv");
        let text = "Extra,ZipCode,State,StateRate,EstimatedCountyRate,EstimatedCityRate,EstimatedSpecialRate,\
                    TaxRegionName,EstimatedCombinedRate\nx,11430,ny,0.04,0,0.045,0.00375,\"NEW YORK, NY\",0.08875\n";
        std::fs::write(&one, text).unwrap();
        let table = load(&one).unwrap();
        assert_eq!(table.zip5.as_ref().map(|z| (z.files.len(), z.zips, z.months.is_empty())), Some((1, 1, true)));
        let jfk = table.rates(&super::super::Address::us("NY", "11430")).unwrap();
        assert_eq!((jfk.city.as_str(), jfk.combined_rate), ("NEW YORK, NY", Decimal::new(8875, 5)));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_bad_row_refuses_the_whole_load_with_file_line_and_reason() {
        let cases = [
            (
                "NY,11430,NYC,8.875,0.04,0,0.045,0.00375,1",
                "EstimatedCombinedRate 8.875 is not a fraction between 0 and 1",
            ),
            ("NY,11430,NYC,0.08875,0.04,-0.01,0.055,0.00375,1", "EstimatedCountyRate -0.01 is not a fraction"),
            ("NY,11430,NYC,0.08875,0.04,0,0.045,0,1", "the parts add up to 0.085"),
            ("NY,1143,NYC,0.08875,0.04,0,0.045,0.00375,1", "ZipCode `1143` is not five digits"),
            ("NY,11430,NYC,0.08875,0.04,0,0.045,abc,1", "EstimatedSpecialRate `abc` is not a number"),
            ("XX,11430,NYC,0.08875,0.04,0,0.045,0.00375,1", "State `XX` is not a US state or DC"),
            ("NY,11430,NYC", "3 fields, the header has 9"),
        ];
        for (index, (bad, why)) in cases.into_iter().enumerate() {
            let good = "NY,10002,NEW YORK CITY,0.08875,0.04,0,0.045,0.00375,1";
            let text = format!("{HEADER}\n{good}\n{bad}\n");
            let dir = folder(&format!("bad{index}"), &[("TAXRATES_ZIP5_NY202602.csv", &text)]);
            let error = load(&dir).unwrap_err();
            assert!(error.contains("TAXRATES_ZIP5_NY202602.csv:3: ") && error.contains(why), "{bad}: {error}");
            let _ = std::fs::remove_dir_all(&dir);
        }
        let twice = format!("{HEADER}\nNY,10002,A,0.04,0.04,0,0,0,1\n");
        let dir = folder("twice", &[("TAXRATES_ZIP5_NJ202602.csv", &twice), ("TAXRATES_ZIP5_NY202602.csv", &twice)]);
        let error = load(&dir).unwrap_err();
        assert!(
            error.contains("NY202602.csv:2: ZIP 10002 is listed twice (first at ") && error.contains("NJ202602.csv:2)"),
            "{error}"
        );
        let no_column = folder("nocolumn", &[("TAXRATES_ZIP5_NY202602.csv", "State,ZipCode\nNY,10002\n")]);
        assert!(load(&no_column).unwrap_err().contains(":1: no `TaxRegionName` column"));
        let empty = folder("empty", &[("rates.csv", "x")]);
        assert!(load(&empty).unwrap_err().contains("no TAXRATES_ZIP5_*.csv files in this folder"));
        assert!(load(&empty.join("missing.csv")).unwrap_err().contains("missing.csv: "));
        for dir in [dir, no_column, empty] {
            let _ = std::fs::remove_dir_all(&dir);
        }
    }

    #[test]
    fn months_come_from_avalara_file_names() {
        assert_eq!(month_of(Path::new("x/TAXRATES_ZIP5_NY202602.csv")).as_deref(), Some("2026-02"));
        assert_eq!(month_of(Path::new("rates.csv")), None);
        assert_eq!(month_of(Path::new("TAXRATES_ZIP5_NY202613.csv")), None);
    }
}
