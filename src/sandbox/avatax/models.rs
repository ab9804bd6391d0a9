//! The AvaTax simulator's state and its rules, free of HTTP: companies, customers, exemption
//! certificates, nexus, and transactions with their versions, statuses and audit records.
//!
//! Every operation validates everything first and changes state only when it succeeds, so a
//! rejected call leaves no trace.

use std::collections::HashMap;
use std::sync::Arc;

use rust_decimal::Decimal;
use serde_json::Value;
use time::{Date, OffsetDateTime};

use super::calc::{self, LineTax, Place, Relief};
use super::documents::{Documents, Version};
use super::errors::AvaError;
use super::reference::{self, TaxCode};
use crate::sandbox::rng::Rng;
use crate::sandbox::tax::Table;

/// Looks a name up in an enum's names (any case) or takes its number, as the service accepts
/// both (`"type": "SalesInvoice"` or `"type": 1`).
pub fn enum_index(names: &[&str], text: &str) -> Option<usize> {
    let text = text.trim();
    if let Ok(n) = text.parse::<usize>() {
        return (n < names.len()).then_some(n);
    }
    names.iter().position(|n| n.eq_ignore_ascii_case(text))
}

/// DocumentType, in the service's numbering (0–13).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DocType(usize);

impl DocType {
    pub const NAMES: &'static [&'static str] = crate::catalog::AVATAX_DOCUMENT_TYPES;
    pub const SALES_ORDER: DocType = DocType(0);
    pub const SALES_INVOICE: DocType = DocType(1);
    pub const RETURN_INVOICE: DocType = DocType(5);

    pub fn parse(text: &str) -> Option<DocType> {
        enum_index(Self::NAMES, text).map(DocType)
    }

    pub fn name(self) -> &'static str {
        Self::NAMES.get(self.0).copied().unwrap_or("SalesOrder")
    }

    /// Invoices are recorded; orders are quotes, calculated and forgotten.
    pub fn is_recorded(self) -> bool {
        self.name().ends_with("Invoice")
    }
}

/// DocumentStatus values a stored or returned document can have.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DocStatus {
    Temporary,
    Saved,
    Posted,
    Committed,
    Cancelled,
    Adjusted,
}

impl DocStatus {
    pub fn name(self) -> &'static str {
        match self {
            DocStatus::Temporary => "Temporary",
            DocStatus::Saved => "Saved",
            DocStatus::Posted => "Posted",
            DocStatus::Committed => "Committed",
            DocStatus::Cancelled => "Cancelled",
            DocStatus::Adjusted => "Adjusted",
        }
    }
}

/// An AdjustmentReason by name or by its number (from 1; 0, NotAdjusted, is no reason to adjust).
fn adjustment_reason(text: &str) -> Option<&'static str> {
    let reasons = crate::catalog::AVATAX_ADJUSTMENT_REASONS;
    let text = text.trim();
    match text.parse::<usize>() {
        Ok(number) => number.checked_sub(1).and_then(|i| reasons.get(i)).copied(),
        Err(_) => reasons.iter().find(|name| name.eq_ignore_ascii_case(text)).copied(),
    }
}

/// VoidReasonCode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VoidReason {
    Unspecified,
    PostFailed,
    DocDeleted,
    DocVoided,
    AdjustmentCancelled,
}

impl VoidReason {
    pub const NAMES: [&'static str; 5] =
        ["Unspecified", "PostFailed", "DocDeleted", "DocVoided", "AdjustmentCancelled"];

    pub fn parse(text: &str) -> Option<VoidReason> {
        Some(match enum_index(&Self::NAMES, text)? {
            0 => VoidReason::Unspecified,
            1 => VoidReason::PostFailed,
            2 => VoidReason::DocDeleted,
            3 => VoidReason::DocVoided,
            _ => VoidReason::AdjustmentCancelled,
        })
    }
}

/// RefundType.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RefundType {
    Full,
    Partial,
    TaxOnly,
    Percentage,
}

impl RefundType {
    pub const NAMES: [&'static str; 4] = ["Full", "Partial", "TaxOnly", "Percentage"];

    pub fn parse(text: &str) -> Option<RefundType> {
        Some(match enum_index(&Self::NAMES, text)? {
            0 => RefundType::Full,
            1 => RefundType::Partial,
            2 => RefundType::TaxOnly,
            _ => RefundType::Percentage,
        })
    }
}

/// An address as sent (AddressLocationInfo).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Address {
    pub location_code: String,
    pub line1: String,
    pub line2: String,
    pub line3: String,
    pub city: String,
    pub region: String,
    pub country: String,
    pub postal_code: String,
    pub latitude: Option<f64>,
    pub longitude: Option<f64>,
}

/// The address roles of a document or line, in the service's names.
pub const ADDRESS_ROLES: [&str; 8] = [
    "SingleLocation",
    "ShipFrom",
    "ShipTo",
    "PointOfOrderOrigin",
    "PointOfOrderAcceptance",
    "GoodsPlaceOrServiceRendered",
    "Import",
    "BillTo",
];

/// The addresses of a document or a line, by role.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Addresses(pub Vec<(&'static str, Address)>);

impl Addresses {
    fn role(&self, role: &str) -> Option<&Address> {
        self.0.iter().find(|(r, _)| *r == role).map(|(_, a)| a)
    }

    /// Where the goods go: the destination decides the rates (destination sourcing).
    pub fn destination(&self) -> Option<&Address> {
        ["ShipTo", "SingleLocation", "PointOfOrderAcceptance", "GoodsPlaceOrServiceRendered", "ShipFrom"]
            .iter()
            .find_map(|r| self.role(r))
    }

    pub fn origin(&self) -> Option<&Address> {
        ["ShipFrom", "SingleLocation", "PointOfOrderOrigin"].iter().find_map(|r| self.role(r)).or(self.destination())
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// A line as sent (LineItemModel).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LineInput {
    pub number: String,
    pub quantity: Decimal,
    pub amount: Decimal,
    pub tax_code: String,
    pub item_code: String,
    pub description: String,
    pub discounted: bool,
    pub tax_included: bool,
    pub entity_use_code: String,
    pub exemption_code: String,
    pub ref1: String,
    pub ref2: String,
    pub addresses: Addresses,
}

/// TaxOverrideModel: the kinds the simulator applies.
#[derive(Clone, Debug, PartialEq)]
pub enum TaxOverride {
    /// Rates of another date.
    TaxDate { date: Date, reason: String },
    /// A tax amount decided elsewhere, spread over the taxable lines.
    TaxAmount { amount: Decimal, reason: String },
    /// Every line exempt.
    Exemption { reason: String },
}

impl TaxOverride {
    pub fn kind(&self) -> &'static str {
        match self {
            TaxOverride::TaxDate { .. } => "TaxDate",
            TaxOverride::TaxAmount { .. } => "TaxAmount",
            TaxOverride::Exemption { .. } => "Exemption",
        }
    }

    pub fn reason(&self) -> &str {
        match self {
            TaxOverride::TaxDate { reason, .. }
            | TaxOverride::TaxAmount { reason, .. }
            | TaxOverride::Exemption { reason } => reason,
        }
    }
}

/// A transaction as sent (CreateTransactionModel), kept for adjustments and audits.
#[derive(Clone, Debug, PartialEq)]
pub struct TransactionInput {
    pub code: String,
    pub doc_type: DocType,
    pub company_code: String,
    pub date: Date,
    pub customer_code: String,
    pub entity_use_code: String,
    pub exemption_no: String,
    pub discount: Decimal,
    pub purchase_order_no: String,
    pub reference_code: String,
    pub reporting_location_code: String,
    pub salesperson_code: String,
    pub description: String,
    pub email: String,
    pub business_identification_no: String,
    pub currency_code: String,
    pub batch_code: String,
    pub commit: bool,
    pub addresses: Addresses,
    pub lines: Vec<LineInput>,
    pub tax_override: Option<TaxOverride>,
}

/// A calculated line.
#[derive(Clone, Debug, PartialEq)]
pub struct Line {
    pub id: i64,
    pub input: LineInput,
    pub tax_code: &'static TaxCode,
    pub line_amount: Decimal,
    pub discount_amount: Decimal,
    pub tax: LineTax,
    /// The tax as calculated before an override.
    pub tax_calculated: Decimal,
    pub exempt_cert_id: i64,
    pub exempt_no: String,
    pub entity_use_code: String,
    pub destination: Address,
    pub origin: Address,
}

/// A stored (or quoted) document.
#[derive(Clone, Debug, PartialEq)]
pub struct Transaction {
    pub id: i64,
    pub company_id: i64,
    pub code: String,
    pub doc_type: DocType,
    pub status: DocStatus,
    pub version: i64,
    pub locked: bool,
    pub input: TransactionInput,
    pub tax_date: Date,
    pub lines: Vec<Line>,
    pub adjustment_reason: &'static str,
    pub adjustment_description: String,
    /// The status this version had when a newer version replaced it (for AdjustmentCancelled).
    pub status_before_adjustment: Option<DocStatus>,
    pub created: OffsetDateTime,
    pub modified: OffsetDateTime,
    /// Notes for the caller (AvaTaxMessage), e.g. a rate from the state fallback.
    pub messages: Vec<String>,
    pub origin_address_id: i64,
    pub destination_address_id: i64,
}

impl Transaction {
    pub fn total_amount(&self) -> Decimal {
        self.lines.iter().map(|l| l.line_amount).sum()
    }
    pub fn total_discount(&self) -> Decimal {
        self.lines.iter().map(|l| l.discount_amount).sum()
    }
    pub fn total_exempt(&self) -> Decimal {
        self.lines.iter().map(|l| l.tax.exempt).sum()
    }
    pub fn total_taxable(&self) -> Decimal {
        self.lines.iter().map(|l| l.tax.taxable).sum()
    }
    pub fn total_tax(&self) -> Decimal {
        self.lines.iter().map(|l| l.tax.tax).sum()
    }
    pub fn total_tax_calculated(&self) -> Decimal {
        self.lines.iter().map(|l| l.tax_calculated).sum()
    }
    pub fn destination(&self) -> Option<&Address> {
        self.lines.first().map(|l| &l.destination)
    }
}

impl Version for Transaction {
    fn id(&self) -> i64 {
        self.id
    }
    fn company_id(&self) -> i64 {
        self.company_id
    }
    fn code(&self) -> &str {
        &self.code
    }
    fn customer_code(&self) -> &str {
        &self.input.customer_code
    }
    fn date(&self) -> Date {
        self.input.date
    }
    fn total_amount(&self) -> Decimal {
        Transaction::total_amount(self)
    }
}

/// The original call of a document version, for `audit`: the request as sent (compact JSON
/// text, a tenth of what it costs as a `Value`), and what the version was when it was answered.
/// The answer itself is not kept: only the status changes after it, so rendering the version
/// with its first status and time gives the same text back.
#[derive(Clone, Debug, PartialEq)]
pub struct Audit {
    request: Box<str>,
    pub timestamp: OffsetDateTime,
    status: DocStatus,
}

impl Audit {
    fn new(request: &Value, first: &Transaction) -> Audit {
        Audit { request: request.to_string().into_boxed_str(), timestamp: first.modified, status: first.status }
    }

    pub fn request(&self) -> Value {
        serde_json::from_str(&self.request).unwrap_or(Value::Null)
    }

    /// The version as it was answered: its first status, unlocked, not yet adjusted.
    pub fn as_answered(&self, version: &Transaction) -> Transaction {
        Transaction {
            status: self.status,
            modified: self.timestamp,
            locked: false,
            status_before_adjustment: None,
            ..version.clone()
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Company {
    pub id: i64,
    pub account_id: i64,
    pub code: String,
    pub name: String,
    pub is_default: bool,
    pub is_active: bool,
    pub default_country: String,
    pub taxpayer_id_number: String,
    pub base_currency_code: String,
    pub is_test: bool,
    pub created: OffsetDateTime,
    pub modified: OffsetDateTime,
}

/// Fields of a new company.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CompanyInput {
    pub code: String,
    pub name: String,
    pub default_country: String,
    pub taxpayer_id_number: String,
    pub base_currency_code: String,
    pub is_default: bool,
    pub is_test: bool,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Customer {
    pub id: i64,
    pub company_id: i64,
    pub customer_code: String,
    pub alternate_id: String,
    pub name: String,
    pub attn_name: String,
    pub line1: String,
    pub line2: String,
    pub city: String,
    pub region: String,
    pub postal_code: String,
    pub country: String,
    pub phone_number: String,
    pub email_address: String,
    pub is_bill: bool,
    pub is_ship: bool,
    pub created: Option<OffsetDateTime>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Certificate {
    pub id: i64,
    pub company_id: i64,
    pub signed_date: Date,
    pub expiration_date: Date,
    pub exemption_number: String,
    pub exemption_reason: String,
    /// The exposure zone's state (postal code) and its name.
    pub region: String,
    pub zone_name: String,
    pub customer_codes: Vec<String>,
    pub exempt_percentage: Decimal,
    pub status: String,
    pub valid: bool,
    pub created: OffsetDateTime,
}

/// Fields of a new certificate.
#[derive(Clone, Debug, PartialEq)]
pub struct CertificateInput {
    pub signed_date: Date,
    pub expiration_date: Option<Date>,
    pub exemption_number: String,
    pub exemption_reason: String,
    pub zone: String,
    pub customer_codes: Vec<String>,
    pub exempt_percentage: Decimal,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Nexus {
    pub id: i64,
    pub company_id: i64,
    pub country: String,
    pub region: String,
    pub juris_code: String,
    pub juris_name: String,
    pub effective_date: Date,
    pub end_date: Option<Date>,
    pub nexus_type_id: String,
    pub has_local_nexus: bool,
    pub created: OffsetDateTime,
}

/// Fields of a new nexus declaration.
#[derive(Clone, Debug, PartialEq)]
pub struct NexusInput {
    pub country: String,
    pub region: String,
    pub effective_date: Option<Date>,
    pub end_date: Option<Date>,
    pub nexus_type_id: String,
    pub has_local_nexus: bool,
}

/// A refund request (RefundTransactionModel).
#[derive(Clone, Debug, PartialEq)]
pub struct RefundInput {
    pub code: String,
    pub date: Date,
    pub kind: RefundType,
    pub percentage: Option<Decimal>,
    pub lines: Vec<String>,
    pub reference_code: String,
    pub use_tax_date_override: bool,
}

/// Everything one AvaTax account holds.
#[derive(Clone, Debug)]
pub struct State {
    pub account_id: i64,
    rng: Rng,
    next_id: i64,
    pub companies: Vec<Company>,
    pub customers: Vec<Customer>,
    pub certificates: Vec<Certificate>,
    pub nexus: Vec<Nexus>,
    /// Every version of every recorded document, oldest first.
    pub transactions: Documents<Transaction>,
    audits: HashMap<i64, Audit>,
    /// How many of each are kept (lower in tests).
    pub caps: Caps,
    /// The rate tables the sandbox was started with.
    pub tax: Arc<Table>,
}

/// What a sandbox keeps at most, so one left running under load keeps bounded memory (the real
/// service keeps documents for years). Past a cap the oldest document versions, customers,
/// certificates and nexus declarations are forgotten; companies, which everything else
/// belongs to, are refused instead.
#[derive(Clone, Copy, Debug)]
pub struct Caps {
    pub documents: usize,
    pub companies: usize,
    pub customers: usize,
    pub certificates: usize,
    pub nexus: usize,
}

impl Caps {
    pub const DEFAULT: Caps =
        Caps { documents: 100_000, companies: 1_000, customers: 50_000, certificates: 50_000, nexus: 10_000 };
}

/// Drops the oldest records of `list` past `cap`.
fn keep_newest<T>(list: &mut Vec<T>, cap: usize) {
    if list.len() > cap {
        list.drain(..list.len() - cap);
    }
}

impl State {
    /// Forgets the oldest versions once past the cap, a tenth of it at a time, so the cost of
    /// shifting the list is paid rarely.
    fn forget_beyond_cap(&mut self) {
        let cap = self.caps.documents;
        if self.transactions.len() <= cap {
            return;
        }
        let excess = self.transactions.len() - cap + cap / 10;
        for forgotten in self.transactions.remove_oldest(excess) {
            self.audits.remove(&forgotten.id);
        }
    }
}

fn company_not_found(key: &str) -> AvaError {
    AvaError::not_found("Company", key)
}

fn document_not_found(code: &str) -> AvaError {
    AvaError::not_found("Document", code)
}

impl State {
    pub fn new(seed: u64, account_id: i64, tax: Arc<Table>) -> State {
        State {
            tax,
            account_id,
            rng: Rng::new(seed ^ 0xA7A7),
            next_id: 100_000,
            companies: Vec::new(),
            customers: Vec::new(),
            certificates: Vec::new(),
            nexus: Vec::new(),
            transactions: Documents::default(),
            audits: HashMap::new(),
            caps: Caps::DEFAULT,
        }
    }

    fn id(&mut self) -> i64 {
        self.next_id += 1 + i64::try_from(self.rng.below(7)).unwrap_or(0);
        self.next_id
    }

    pub fn uuid(&mut self) -> String {
        self.rng.uuid()
    }

    // ---- companies -------------------------------------------------------------------------

    pub fn company(&self, id: i64) -> Result<&Company, AvaError> {
        self.companies.iter().find(|c| c.id == id).ok_or_else(|| {
            AvaError::not_found("Company", &id.to_string())
                .describe(format!("The Company with id '{id}' was not found."))
        })
    }

    pub fn company_by_code(&self, code: &str) -> Result<&Company, AvaError> {
        if code.trim().is_empty() {
            return self.companies.iter().find(|c| c.is_default).ok_or_else(|| {
                AvaError::new(400, "NoDefaultCompany", 27, "There is no default company.")
                    .describe("Name the company in companyCode.")
                    .refers_to("companyCode")
            });
        }
        self.companies.iter().find(|c| c.code.eq_ignore_ascii_case(code.trim())).ok_or_else(|| company_not_found(code))
    }

    pub fn create_companies(
        &mut self,
        inputs: Vec<CompanyInput>,
        now: OffsetDateTime,
    ) -> Result<Vec<Company>, AvaError> {
        if inputs.is_empty() {
            return Err(AvaError::model_required("Send an array with at least one company."));
        }
        for (i, input) in inputs.iter().enumerate() {
            let at = |field: &str| format!("[{i}].{field}");
            for (field, value) in
                [("companyCode", &input.code), ("name", &input.name), ("defaultCountry", &input.default_country)]
            {
                if value.trim().is_empty() {
                    return Err(AvaError::required(&at(field)));
                }
            }
            if input.code.len() > 25 {
                return Err(AvaError::new(400, "StringLengthError", 13, "Field companyCode is too long.")
                    .describe("A company code has at most 25 characters.")
                    .refers_to(at("companyCode")));
            }
            if input.default_country.len() != 2 || !input.default_country.chars().all(|c| c.is_ascii_alphabetic()) {
                return Err(AvaError::new(
                    400,
                    "InvalidCountry",
                    125,
                    format!("'{}' is not a country code.", input.default_country),
                )
                .describe("Use a two-letter ISO 3166 code such as US.")
                .refers_to(at("defaultCountry")));
            }
            let taken = self.companies.iter().any(|c| c.code.eq_ignore_ascii_case(&input.code))
                || inputs[..i].iter().any(|o| o.code.eq_ignore_ascii_case(&input.code));
            if taken {
                return Err(AvaError::new(
                    400,
                    "DuplicateCompanyCode",
                    142,
                    format!("The company code '{}' is already used.", input.code),
                )
                .describe("Company codes are unique within an account.")
                .refers_to(at("companyCode")));
            }
        }
        if self.companies.len() + inputs.len() > self.caps.companies {
            return Err(AvaError::new(
                400,
                // Not an AvaTax code: the refusal is the simulator's, and says so.
                "SandboxLimitReached",
                0,
                format!("The sandbox keeps at most {} companies.", self.caps.companies),
            )
            .describe("The simulator's own limit, not the service's: restart or reset the sandbox to start over."));
        }
        let mut created = Vec::new();
        for input in inputs {
            let id = self.id();
            if input.is_default {
                for c in &mut self.companies {
                    c.is_default = false;
                }
            }
            let company = Company {
                id,
                account_id: self.account_id,
                code: input.code,
                name: input.name,
                is_default: input.is_default,
                is_active: true,
                default_country: input.default_country.to_ascii_uppercase(),
                taxpayer_id_number: input.taxpayer_id_number,
                base_currency_code: if input.base_currency_code.is_empty() {
                    "USD".to_owned()
                } else {
                    input.base_currency_code
                },
                is_test: input.is_test,
                created: now,
                modified: now,
            };
            self.companies.push(company.clone());
            created.push(company);
        }
        Ok(created)
    }

    // ---- customers, certificates, nexus ------------------------------------------------------

    pub fn create_customers(
        &mut self,
        company_id: i64,
        inputs: Vec<Customer>,
        now: OffsetDateTime,
    ) -> Result<Vec<Customer>, AvaError> {
        self.company(company_id)?;
        if inputs.is_empty() {
            return Err(AvaError::model_required("Send an array with at least one customer."));
        }
        for (i, c) in inputs.iter().enumerate() {
            let at = |field: &str| format!("[{i}].{field}");
            for (field, value) in [
                ("customerCode", &c.customer_code),
                ("name", &c.name),
                ("line1", &c.line1),
                ("city", &c.city),
                ("postalCode", &c.postal_code),
                ("country", &c.country),
            ] {
                if value.trim().is_empty() {
                    return Err(AvaError::required(&at(field)));
                }
            }
            check_region(&c.country, &c.region, &at("region"))?;
            let taken = self.customers.iter().any(|o| o.company_id == company_id && o.customer_code == c.customer_code)
                || inputs[..i].iter().any(|o| o.customer_code == c.customer_code);
            if taken {
                return Err(AvaError::new(
                    400,
                    "DuplicateEntry",
                    193,
                    format!("The customer code '{}' already exists.", c.customer_code),
                )
                .describe("Customer codes are unique within a company.")
                .refers_to(at("customerCode")));
            }
        }
        let mut created = Vec::new();
        for mut c in inputs {
            c.id = self.id();
            c.company_id = company_id;
            c.country = c.country.to_ascii_uppercase();
            c.region = c.region.to_ascii_uppercase();
            c.created = Some(now);
            self.customers.push(c.clone());
            created.push(c);
        }
        keep_newest(&mut self.customers, self.caps.customers);
        Ok(created)
    }

    pub fn create_certificates(
        &mut self,
        company_id: i64,
        inputs: Vec<CertificateInput>,
        now: OffsetDateTime,
    ) -> Result<Vec<Certificate>, AvaError> {
        self.company(company_id)?;
        if inputs.is_empty() {
            return Err(AvaError::model_required("Send an array with at least one certificate."));
        }
        let mut zones = Vec::new();
        for (i, c) in inputs.iter().enumerate() {
            let at = |field: &str| format!("[{i}].{field}");
            if c.exemption_reason.trim().is_empty() {
                return Err(AvaError::new(400, "MissingExemptReason", 1210, "An exemption reason is required.")
                    .refers_to(at("exemptionReason")));
            }
            let Some((code, name, _)) = reference::us_state(&c.zone) else {
                return Err(AvaError::unknown_reference("ExposureZone", &c.zone, &at("exposureZone")));
            };
            if let Some(expiry) = c.expiration_date {
                if expiry < c.signed_date {
                    return Err(AvaError::new(
                        400,
                        "DateRangeError",
                        80,
                        "The expiration date is before the signed date.",
                    )
                    .refers_to(at("expirationDate")));
                }
            }
            if c.exempt_percentage < Decimal::ZERO || c.exempt_percentage > Decimal::ONE_HUNDRED {
                return Err(AvaError::range(&at("exemptPercentage"), "An exempt percentage is between 0 and 100."));
            }
            for customer in &c.customer_codes {
                if !self.customers.iter().any(|o| o.company_id == company_id && &o.customer_code == customer) {
                    return Err(AvaError::unknown_reference("Customer", customer, &at("customers")));
                }
            }
            zones.push((code, name));
        }
        let mut created = Vec::new();
        for (c, (code, name)) in inputs.into_iter().zip(zones) {
            let expiration_date = c.expiration_date.unwrap_or_else(|| add_years(c.signed_date, 4));
            let certificate = Certificate {
                id: self.id(),
                company_id,
                signed_date: c.signed_date,
                expiration_date,
                exemption_number: c.exemption_number,
                exemption_reason: c.exemption_reason.to_ascii_uppercase(),
                region: code.to_owned(),
                zone_name: title_case(name),
                customer_codes: c.customer_codes,
                exempt_percentage: c.exempt_percentage,
                status: "COMPLETE".to_owned(),
                valid: true,
                created: now,
            };
            self.certificates.push(certificate.clone());
            created.push(certificate);
        }
        keep_newest(&mut self.certificates, self.caps.certificates);
        Ok(created)
    }

    pub fn create_nexus(
        &mut self,
        company_id: i64,
        inputs: Vec<NexusInput>,
        now: OffsetDateTime,
    ) -> Result<Vec<Nexus>, AvaError> {
        self.company(company_id)?;
        if inputs.is_empty() {
            return Err(AvaError::model_required("Send an array with at least one nexus declaration."));
        }
        let mut states = Vec::new();
        for (i, n) in inputs.iter().enumerate() {
            let at = |field: &str| format!("[{i}].{field}");
            if n.country.trim().is_empty() {
                return Err(AvaError::required(&at("country")));
            }
            if n.region.trim().is_empty() {
                return Err(AvaError::required(&at("region")));
            }
            let state = if n.country.eq_ignore_ascii_case("US") { reference::us_state(&n.region) } else { None };
            let Some((code, name, fips)) = state else {
                return Err(AvaError::new(
                    400,
                    "UnknownNexusError",
                    145,
                    format!("There is no nexus for {} {}.", n.country, n.region),
                )
                .describe("Nexus can be declared for a US state or DC, by its two-letter code.")
                .refers_to(at("region")));
            };
            if let (Some(start), Some(end)) = (n.effective_date, n.end_date) {
                if end < start {
                    return Err(AvaError::new(400, "DateRangeError", 80, "The end date is before the effective date.")
                        .refers_to(at("endDate")));
                }
            }
            let duplicate = self.nexus.iter().any(|o| o.company_id == company_id && o.region == code)
                || states.iter().any(|(c, _, _)| *c == code);
            if duplicate {
                return Err(AvaError::new(
                    400,
                    "DuplicateNexusError",
                    144,
                    format!("Nexus in {code} is already declared."),
                )
                .refers_to(at("region")));
            }
            states.push((code, name, fips));
        }
        let mut created = Vec::new();
        for (n, (code, name, fips)) in inputs.into_iter().zip(states) {
            let nexus = Nexus {
                id: self.id(),
                company_id,
                country: "US".to_owned(),
                region: code.to_owned(),
                juris_code: fips.to_owned(),
                juris_name: name.to_owned(),
                effective_date: n.effective_date.unwrap_or(now.date()),
                end_date: n.end_date,
                nexus_type_id: if n.nexus_type_id.is_empty() {
                    "SalesOrSellersUseTax".to_owned()
                } else {
                    n.nexus_type_id
                },
                has_local_nexus: n.has_local_nexus,
                created: now,
            };
            self.nexus.push(nexus.clone());
            created.push(nexus);
        }
        keep_newest(&mut self.nexus, self.caps.nexus);
        Ok(created)
    }

    /// The certificate that exempts `customer` in `region` on `date`, if any.
    fn certificate_for(&self, company_id: i64, customer: &str, region: &str, date: Date) -> Option<&Certificate> {
        self.certificates.iter().find(|c| {
            c.company_id == company_id
                && c.valid
                && c.region.eq_ignore_ascii_case(region)
                && c.signed_date <= date
                && date <= c.expiration_date
                && c.customer_codes.iter().any(|code| code == customer)
        })
    }

    // ---- calculation -------------------------------------------------------------------------

    /// Calculates a document's lines; refuses bad lines, addresses and codes.
    fn calculate(&mut self, company_id: i64, input: &TransactionInput) -> Result<(Vec<Line>, Vec<String>), AvaError> {
        if input.lines.is_empty() {
            // In the recorded words and target, naming no field.
            return Err(AvaError::new(400, "MissingLine", 311, "Transactions must have at least one line.")
                .describe(
                    "The CreateTransactionModel object must have an element called 'lines', with at least one valid \
                     line record.",
                )
                .target("HttpRequestHeaders"));
        }
        // Within this bound no amount, discount share, tax or total below can overflow, so a
        // refused document is refused here, before anything is stored.
        let override_amount = match &input.tax_override {
            Some(TaxOverride::TaxAmount { amount, .. }) => *amount,
            _ => Decimal::ZERO,
        };
        let money = input.lines.iter().map(|l| l.amount).chain([input.discount, override_amount]);
        if crate::sandbox::tax::document_money(money).is_none() {
            return Err(AvaError::range(
                "lines",
                format!(
                    "The amounts of the document, the discount and any tax override together pass {}.",
                    crate::sandbox::tax::MAX_DOCUMENT_MONEY
                ),
            ));
        }
        let discounted_total: Decimal = input.lines.iter().filter(|l| l.discounted).map(|l| l.amount).sum();
        if input.discount != Decimal::ZERO && discounted_total == Decimal::ZERO {
            return Err(AvaError::new(
                400,
                "NoLinesDiscounted",
                190,
                "A discount was given but no line is discounted.",
            )
            .describe("Mark the lines the discount applies to with \"discounted\": true.")
            .refers_to("discount"));
        }
        let mut numbers: Vec<String> = Vec::new();
        let mut prepared = Vec::new();
        let mut messages = Vec::new();
        for (i, line) in input.lines.iter().enumerate() {
            let at = |field: &str| format!("lines[{i}].{field}");
            let number = if line.number.trim().is_empty() { (i + 1).to_string() } else { line.number.clone() };
            if numbers.contains(&number) {
                return Err(AvaError::new(
                    400,
                    "LineAlreadyExists",
                    1101,
                    format!("Line number {number} appears twice."),
                )
                .refers_to(at("number")));
            }
            numbers.push(number);
            if line.quantity < Decimal::ZERO {
                return Err(AvaError::range(
                    &at("quantity"),
                    format!("The quantity {} is negative; use a negative amount for returns.", line.quantity),
                ));
            }
            let tax_code = calc::line_tax_code(&line.tax_code);
            for (field, code) in [("entityUseCode", &line.entity_use_code), ("", &input.entity_use_code)] {
                if !code.trim().is_empty() && crate::sandbox::tax::entity_use_code_description(code).is_none() {
                    let field = if field.is_empty() { "entityUseCode".to_owned() } else { at(field) };
                    return Err(AvaError::unknown_reference("EntityUseCode", code, &field));
                }
            }
            let addresses = if line.addresses.is_empty() { &input.addresses } else { &line.addresses };
            let destination = addresses.destination().cloned().ok_or_else(|| {
                AvaError::new(400, "MissingAddress", 304, "An address is required.")
                    .describe("Give addresses.singleLocation, or addresses.shipFrom and addresses.shipTo.")
                    .refers_to("addresses")
            })?;
            let origin = addresses.origin().cloned().unwrap_or_else(|| destination.clone());
            let destination = complete_address(&self.tax, destination, "addresses")?;
            let origin = complete_address(&self.tax, origin, "addresses")?;
            prepared.push((line, tax_code, destination, origin));
        }
        let date = match &input.tax_override {
            Some(TaxOverride::TaxDate { date, .. }) => *date,
            _ => input.date,
        };
        let nexus: Vec<crate::sandbox::tax::Region> = self
            .nexus
            .iter()
            .filter(|n| {
                n.company_id == company_id && n.effective_date <= date && n.end_date.is_none_or(|end| date < end)
            })
            .map(|n| crate::sandbox::tax::Region::new(&n.country, &n.region))
            .collect();
        let mut lines = Vec::new();
        for (i, (line, tax_code, destination, origin)) in prepared.into_iter().enumerate() {
            let place = |a: &Address| Place {
                country: a.country.clone(),
                region: a.region.clone(),
                postal_code: a.postal_code.clone(),
                city: a.city.clone(),
            };
            let (to, from) = (place(&destination), place(&origin));
            let rates = calc::rates_for(&self.tax, &to)?;
            if rates.fallback {
                let note = format!(
                    "No local rates are known for postal code {}; the {} state rate was used.",
                    to.postal_code, to.region
                );
                if !messages.contains(&note) {
                    messages.push(note);
                }
            }
            let entity_use_code = if line.entity_use_code.trim().is_empty() {
                input.entity_use_code.trim()
            } else {
                line.entity_use_code.trim()
            };
            let exempt_no = if line.exemption_code.trim().is_empty() {
                input.exemption_no.trim()
            } else {
                line.exemption_code.trim()
            };
            let certificate = self
                .certificate_for(company_id, &input.customer_code, &to.region, date)
                .map(|c| (c.id, c.exemption_number.clone()));
            let relief = if matches!(input.tax_override, Some(TaxOverride::Exemption { .. })) {
                Relief::Exempt { cert_id: 0, label: "tax override".to_owned() }
            } else if !entity_use_code.is_empty() {
                Relief::Exempt { cert_id: 0, label: format!("entity use code {entity_use_code}") }
            } else if !exempt_no.is_empty() {
                Relief::Exempt { cert_id: 0, label: exempt_no.to_owned() }
            } else if let Some((id, number)) = &certificate {
                Relief::Exempt { cert_id: *id, label: if number.is_empty() { id.to_string() } else { number.clone() } }
            } else {
                Relief::None
            };
            let discount = if line.discounted && discounted_total != Decimal::ZERO {
                let share = crate::sandbox::tax::proportion(input.discount, line.amount, discounted_total)
                    .ok_or_else(|| too_large("discount", "The discount's share of a line is too large."))?;
                calc::cents(share)
            } else {
                Decimal::ZERO
            };
            let mut amount = line.amount.checked_sub(discount).ok_or_else(|| {
                too_large(&format!("lines[{i}].amount"), "The line's amount less its discount is too large.")
            })?;
            let intra_eu = calc::intra_eu_supply(&from, &to, &input.business_identification_no);
            if line.tax_included && relief == Relief::None && tax_code.code != "NT" && !intra_eu {
                // The amount holds the tax: the net is what, taxed, gives the amount back.
                amount = calc::cents(amount / (Decimal::ONE + rates.total()));
            }
            let number = if line.number.trim().is_empty() { (i + 1).to_string() } else { line.number.clone() };
            let tax = if intra_eu && relief == Relief::None {
                calc::zero_rated_line(&self.tax, &from, amount, tax_code)?
            } else {
                calc::tax_line(&calc::LineCalc {
                    table: &self.tax,
                    number: &number,
                    quantity: line.quantity,
                    amount,
                    tax_code,
                    origin: &from,
                    destination: &to,
                    nexus: nexus.clone(),
                    relief: &relief,
                })?
            };
            let (exempt_cert_id, exempt_no) = match &relief {
                Relief::Exempt { cert_id, .. } if *cert_id != 0 => {
                    (*cert_id, certificate.map(|(_, number)| number).unwrap_or_default())
                }
                _ => (0, exempt_no.to_owned()),
            };
            lines.push(Line {
                id: self.id(),
                input: LineInput { number, ..line.clone() },
                tax_code,
                line_amount: amount,
                discount_amount: discount,
                tax_calculated: tax.tax,
                tax,
                exempt_cert_id,
                exempt_no,
                entity_use_code: entity_use_code.to_ascii_uppercase(),
                destination,
                origin,
            });
        }
        if let Some(TaxOverride::TaxAmount { amount, .. }) = &input.tax_override {
            spread_tax(&mut lines, *amount).ok_or_else(|| {
                too_large("taxOverride.taxAmount", "The tax override's share of a line is too large.")
            })?;
        }
        Ok((lines, messages))
    }

    // ---- transactions ------------------------------------------------------------------------

    /// The current version of a document: `doc_type` `None` means the sales invoice, or the
    /// only document with that code.
    fn find(&self, company_id: i64, code: &str, doc_type: Option<DocType>) -> Result<usize, AvaError> {
        let versions = || self.transactions.versions_of(company_id, code).map(|i| (i, &self.transactions[i]));
        let current =
            |t: DocType| versions().filter(|(_, x)| x.doc_type == t).max_by_key(|(_, x)| x.version).map(|(i, _)| i);
        if let Some(t) = doc_type {
            return current(t).ok_or_else(|| {
                let other = versions().map(|(_, x)| x).next();
                match other {
                    Some(o) => AvaError::new(
                        400,
                        "InvalidDocumentType",
                        1310,
                        format!("Document '{}' type is '{}', not expected '{}'.", o.code, o.doc_type.name(), t.name()),
                    )
                    .refers_to("documentType"),
                    None => document_not_found(code),
                }
            });
        }
        if let Some(i) = current(DocType::SALES_INVOICE) {
            return Ok(i);
        }
        let mut types: Vec<DocType> = Vec::new();
        for (_, x) in versions() {
            if !types.contains(&x.doc_type) {
                types.push(x.doc_type);
            }
        }
        match types.as_slice() {
            [] => Err(document_not_found(code)),
            [only] => current(*only).ok_or_else(|| document_not_found(code)),
            _ => Err(AvaError::new(400, "DocumentCodeConflict", 303, "Cannot uniquely identify document")
                .describe(format!("Several documents have the code '{code}'; name one with documentType."))
                .refers_to("documentType")),
        }
    }

    pub fn transaction(
        &self,
        company_code: &str,
        code: &str,
        doc_type: Option<DocType>,
    ) -> Result<&Transaction, AvaError> {
        let company_id = self.company_by_code(company_code)?.id;
        Ok(&self.transactions[self.find(company_id, code, doc_type)?])
    }

    /// Creates (or, for a code still Saved, replaces) a document; quotes are returned unsaved.
    pub fn create_transaction(
        &mut self,
        mut input: TransactionInput,
        request: Value,
        now: OffsetDateTime,
    ) -> Result<Transaction, AvaError> {
        let company = self.company_by_code(&input.company_code)?.clone();
        input.company_code.clone_from(&company.code);
        let existing = if input.code.trim().is_empty() || !input.doc_type.is_recorded() {
            None
        } else {
            self.find(company.id, &input.code, Some(input.doc_type)).ok()
        };
        if let Some(i) = existing {
            let old = &self.transactions[i];
            if old.locked {
                return Err(locked(&old.code));
            }
            if !matches!(old.status, DocStatus::Saved | DocStatus::Posted) {
                return Err(AvaError::new(
                    400,
                    "TransactionAlreadyExists",
                    1303,
                    "A transaction with this code and type already exists.",
                )
                .describe(format!(
                    "'{}' ({}) is {}; adjust it instead.",
                    old.code,
                    old.doc_type.name(),
                    old.status.name()
                ))
                .refers_to("code"));
            }
        }
        let (lines, messages) = self.calculate(company.id, &input)?;
        if input.code.trim().is_empty() {
            input.code = self.uuid();
        }
        let recorded = input.doc_type.is_recorded();
        let status = match (recorded, input.commit) {
            (false, _) => DocStatus::Temporary,
            (true, true) => DocStatus::Committed,
            (true, false) => DocStatus::Saved,
        };
        let tax_date = match &input.tax_override {
            Some(TaxOverride::TaxDate { date, .. }) => *date,
            _ => input.date,
        };
        let (origin_address_id, destination_address_id) = (self.id(), self.id());
        let mut transaction = Transaction {
            id: if recorded { self.id() } else { 0 },
            company_id: company.id,
            code: input.code.clone(),
            doc_type: input.doc_type,
            status,
            version: 1,
            locked: false,
            input,
            tax_date,
            lines,
            adjustment_reason: "NotAdjusted",
            adjustment_description: String::new(),
            status_before_adjustment: None,
            created: now,
            modified: now,
            messages,
            origin_address_id,
            destination_address_id,
        };
        if recorded {
            match existing {
                Some(i) => {
                    // A Saved document of the same code and type is replaced by the new content.
                    let old = &self.transactions[i];
                    transaction.id = old.id;
                    transaction.created = old.created;
                    transaction.version = old.version;
                    self.transactions.replace(i, transaction.clone());
                }
                None => self.transactions.push(transaction.clone()),
            }
            self.audits.insert(transaction.id, Audit::new(&request, &transaction));
            self.forget_beyond_cap();
        }
        Ok(transaction)
    }

    pub fn audit(&self, company_code: &str, code: &str) -> Result<(&Transaction, &Audit), AvaError> {
        let transaction = self.transaction(company_code, code, None)?;
        let audit = self.audits.get(&transaction.id).ok_or_else(|| document_not_found(code))?;
        Ok((transaction, audit))
    }

    #[expect(clippy::too_many_arguments, reason = "the adjust call's own parameters, each needed")]
    pub fn adjust(
        &mut self,
        company_code: &str,
        code: &str,
        doc_type: Option<DocType>,
        reason: &str,
        description: &str,
        mut input: TransactionInput,
        request: Value,
        now: OffsetDateTime,
    ) -> Result<Transaction, AvaError> {
        let reason = match adjustment_reason(reason) {
            None => {
                return Err(AvaError::new(
                    400,
                    "InvalidAdjustmentType",
                    99,
                    format!("'{reason}' is not an adjustment reason."),
                )
                .describe(format!("Expected one of: {}.", crate::catalog::AVATAX_ADJUSTMENT_REASONS.join(", ")))
                .refers_to("adjustmentReason"))
            }
            Some(reason) => reason,
        };
        if reason == "Other" && description.trim().is_empty() {
            return Err(AvaError::required("adjustmentDescription")
                .describe("An adjustment for the reason Other needs an adjustmentDescription."));
        }
        let company_id = self.company_by_code(company_code)?.id;
        let index = self.find(company_id, code, doc_type)?;
        let old = self.transactions[index].clone();
        if old.locked {
            return Err(locked(&old.code));
        }
        if !matches!(old.status, DocStatus::Saved | DocStatus::Posted | DocStatus::Committed) {
            return Err(AvaError::doc_status(old.status.name(), "Saved|Posted|Committed"));
        }
        input.code.clone_from(&old.code);
        input.doc_type = old.doc_type;
        input.company_code.clone_from(&old.input.company_code);
        let (lines, messages) = self.calculate(company_id, &input)?;
        let status = if input.commit { DocStatus::Committed } else { DocStatus::Saved };
        let tax_date = match &input.tax_override {
            Some(TaxOverride::TaxDate { date, .. }) => *date,
            _ => input.date,
        };
        let new = Transaction {
            id: self.id(),
            status,
            version: old.version + 1,
            input,
            tax_date,
            lines,
            adjustment_reason: reason,
            adjustment_description: description.to_owned(),
            status_before_adjustment: None,
            modified: now,
            messages,
            ..old.clone()
        };
        let previous = &mut self.transactions[index];
        previous.status_before_adjustment = Some(previous.status);
        previous.status = DocStatus::Adjusted;
        previous.modified = now;
        self.transactions.push(new.clone());
        self.audits.insert(new.id, Audit::new(&request, &new));
        self.forget_beyond_cap();
        Ok(new)
    }

    pub fn commit(
        &mut self,
        company_code: &str,
        code: &str,
        doc_type: Option<DocType>,
        commit: bool,
        now: OffsetDateTime,
    ) -> Result<Transaction, AvaError> {
        if !commit {
            return Err(AvaError::invalid_value(
                "commit",
                "Send {\"commit\": true}; a committed document is uncommitted with POST .../uncommit.",
            )
            .refers_to("commit"));
        }
        let company_id = self.company_by_code(company_code)?.id;
        let index = self.find(company_id, code, doc_type)?;
        let transaction = &mut self.transactions[index];
        if transaction.locked {
            return Err(locked(&transaction.code));
        }
        match transaction.status {
            DocStatus::Saved | DocStatus::Posted => {
                transaction.status = DocStatus::Committed;
                transaction.modified = now;
                Ok(transaction.clone())
            }
            DocStatus::Committed => {
                Err(AvaError::new(400, "TransactionIsCommitted", 1313, "The transaction is already committed.")
                    .describe(format!("'{}' was committed before.", transaction.code)))
            }
            other => Err(AvaError::doc_status(other.name(), "Saved|Posted")),
        }
    }

    /// `uncommit`: a committed, unlocked document goes back to Saved.
    pub fn uncommit(
        &mut self,
        company_code: &str,
        code: &str,
        doc_type: Option<DocType>,
        now: OffsetDateTime,
    ) -> Result<Transaction, AvaError> {
        let company_id = self.company_by_code(company_code)?.id;
        let index = self.find(company_id, code, doc_type)?;
        let transaction = &mut self.transactions[index];
        if transaction.locked {
            return Err(locked(&transaction.code));
        }
        if transaction.status != DocStatus::Committed {
            return Err(AvaError::new(400, "DocumentNotCommitted", 313, "The document is not committed.")
                .describe(format!("'{}' is {}.", transaction.code, transaction.status.name())));
        }
        transaction.status = DocStatus::Saved;
        transaction.modified = now;
        Ok(transaction.clone())
    }

    /// `verify`: a Saved document becomes Posted (checked against the caller's books).
    pub fn verify(
        &mut self,
        company_code: &str,
        code: &str,
        doc_type: Option<DocType>,
        now: OffsetDateTime,
    ) -> Result<Transaction, AvaError> {
        let company_id = self.company_by_code(company_code)?.id;
        let index = self.find(company_id, code, doc_type)?;
        let transaction = &mut self.transactions[index];
        if transaction.status != DocStatus::Saved {
            return Err(AvaError::new(
                400,
                "InvalidDocumentStatusForVerify",
                1306,
                "Only a Saved document can be verified.",
            )
            .describe(format!("'{}' is {}.", transaction.code, transaction.status.name())));
        }
        transaction.status = DocStatus::Posted;
        transaction.modified = now;
        Ok(transaction.clone())
    }

    /// Voids per the reason-code table of api/avatax.md §6.3.
    pub fn void(
        &mut self,
        company_code: &str,
        code: &str,
        doc_type: Option<DocType>,
        reason: VoidReason,
        now: OffsetDateTime,
    ) -> Result<Transaction, AvaError> {
        let company_id = self.company_by_code(company_code)?.id;
        let index = self.find(company_id, code, doc_type)?;
        let current = self.transactions[index].clone();
        if current.locked {
            return Err(locked(&current.code));
        }
        let status = current.status;
        let key = (current.company_id, current.code.clone(), current.doc_type);
        let same_doc = move |x: &Transaction| x.company_id == key.0 && x.code == key.1 && x.doc_type == key.2;
        match reason {
            VoidReason::Unspecified => Ok(current),
            VoidReason::PostFailed => {
                if status != DocStatus::Posted {
                    return Err(AvaError::doc_status(status.name(), "Posted"));
                }
                let transaction = &mut self.transactions[index];
                transaction.status = DocStatus::Saved;
                transaction.modified = now;
                Ok(transaction.clone())
            }
            VoidReason::DocDeleted => {
                if status == DocStatus::Committed {
                    return Ok(self.cancel(index, now));
                }
                // Saved, Posted and already voided documents are removed with all versions.
                for id in self.transactions.remove_where(same_doc) {
                    self.audits.remove(&id);
                }
                Ok(Transaction { status: DocStatus::Cancelled, modified: now, ..current })
            }
            VoidReason::DocVoided => {
                if status == DocStatus::Cancelled {
                    return Err(AvaError::new(
                        400,
                        "TransactionAlreadyCancelled",
                        198,
                        "The transaction has already been cancelled.",
                    )
                    .describe(format!("'{}' was voided before.", current.code)));
                }
                Ok(self.cancel(index, now))
            }
            VoidReason::AdjustmentCancelled => {
                if current.version < 2 || status == DocStatus::Cancelled {
                    return Err(AvaError::doc_status(status.name(), "an adjusted document"));
                }
                let previous = self
                    .transactions
                    .versions_of(current.company_id, &current.code)
                    .find(|i| same_doc(&self.transactions[*i]) && self.transactions[*i].version == current.version - 1)
                    .ok_or_else(|| document_not_found(code))?;
                let restored = &mut self.transactions[previous];
                restored.status = restored.status_before_adjustment.take().unwrap_or(DocStatus::Saved);
                restored.modified = now;
                let restored = restored.clone();
                self.audits.remove(&current.id);
                self.transactions.remove(index);
                Ok(restored)
            }
        }
    }

    fn cancel(&mut self, index: usize, now: OffsetDateTime) -> Transaction {
        let transaction = &mut self.transactions[index];
        transaction.status = DocStatus::Cancelled;
        transaction.modified = now;
        transaction.clone()
    }

    /// A refund: a new committed ReturnInvoice that gives back what the sale charged, in full,
    /// for some lines, the tax only, or a percentage. The sale itself is unchanged.
    pub fn refund(
        &mut self,
        company_code: &str,
        code: &str,
        doc_type: Option<DocType>,
        refund: RefundInput,
        request: Value,
        now: OffsetDateTime,
    ) -> Result<Transaction, AvaError> {
        if let Some(t) = doc_type.filter(|t| *t != DocType::SALES_INVOICE) {
            return Err(AvaError::new(
                400,
                "InvalidDocumentTypeForRefund",
                702,
                format!("A {} cannot be refunded.", t.name()),
            )
            .describe("Only a committed SalesInvoice can be refunded; quotes (SalesOrder) are never recorded.")
            .refers_to("documentType"));
        }
        match refund.kind {
            RefundType::Full | RefundType::TaxOnly if refund.percentage.is_some() => {
                let (code, number) = if refund.kind == RefundType::TaxOnly {
                    ("RefundPercentageForTaxOnly", 706)
                } else {
                    ("RefundTypeAndPercentageMismatch", 701)
                };
                return Err(AvaError::new(400, code, number, "refundPercentage is only for Percentage refunds.")
                    .refers_to("refundPercentage"));
            }
            RefundType::Percentage if refund.percentage.is_none() => {
                return Err(AvaError::new(
                    400,
                    "RefundPercentageMissing",
                    709,
                    "A Percentage refund needs refundPercentage.",
                )
                .refers_to("refundPercentage"));
            }
            RefundType::Partial if refund.lines.is_empty() => {
                return Err(AvaError::new(400, "RefundLinesRequired", 704, "A Partial refund needs refundLines.")
                    .refers_to("refundLines"));
            }
            RefundType::Full | RefundType::TaxOnly | RefundType::Percentage if !refund.lines.is_empty() => {
                return Err(AvaError::new(
                    400,
                    "RefundTypeAndLineMismatch",
                    703,
                    "refundLines are only for Partial refunds.",
                )
                .refers_to("refundLines"));
            }
            _ => {}
        }
        if let Some(p) = refund.percentage {
            if p <= Decimal::ZERO || p > Decimal::ONE_HUNDRED {
                return Err(AvaError::new(
                    400,
                    "RefundPercentageOutOfRange",
                    708,
                    format!("refundPercentage {p} is not above 0 and at most 100."),
                )
                .refers_to("refundPercentage"));
            }
        }
        let company_id = self.company_by_code(company_code)?.id;
        let index = self.find(company_id, code, doc_type)?;
        let original = self.transactions[index].clone();
        if original.doc_type != DocType::SALES_INVOICE {
            return Err(AvaError::new(
                400,
                "InvalidDocumentTypeForRefund",
                702,
                format!("A {} cannot be refunded.", original.doc_type.name()),
            )
            .refers_to("documentType"));
        }
        if original.status != DocStatus::Committed {
            return Err(AvaError::new(
                400,
                "InvalidDocumentStatusForRefund",
                700,
                "Document is not in a status to process refund",
            )
            .describe(format!(
                "'{}' is {}; only a Committed document can be refunded.",
                original.code,
                original.status.name()
            )));
        }
        for number in &refund.lines {
            if !original.lines.iter().any(|l| &l.input.number == number) {
                return Err(AvaError::new(400, "LineNoOutOfRange", 707, format!("The document has no line {number}."))
                    .refers_to("refundLines"));
            }
        }
        let refund_code = if refund.code.trim().is_empty() { self.uuid() } else { refund.code.clone() };
        if self.find(company_id, &refund_code, Some(DocType::RETURN_INVOICE)).is_ok() {
            return Err(AvaError::new(
                400,
                "TransactionAlreadyExists",
                1303,
                "A transaction with this code and type already exists.",
            )
            .describe(format!("A ReturnInvoice '{refund_code}' exists; choose another refundTransactionCode."))
            .refers_to("refundTransactionCode"));
        }
        let factor = match refund.kind {
            RefundType::Percentage => -refund.percentage.unwrap_or(Decimal::ONE_HUNDRED) / Decimal::ONE_HUNDRED,
            _ => -Decimal::ONE,
        };
        let mut lines = Vec::new();
        for line in original
            .lines
            .iter()
            .filter(|l| refund.kind != RefundType::Partial || refund.lines.contains(&l.input.number))
        {
            let amounts = refund.kind != RefundType::TaxOnly;
            lines.push(Line { id: self.id(), ..scale_line(line, factor, amounts) });
        }
        let mut input = original.input.clone();
        input.code.clone_from(&refund_code);
        input.doc_type = DocType::RETURN_INVOICE;
        input.date = refund.date;
        input.reference_code.clone_from(&refund.reference_code);
        input.commit = true;
        input.lines = lines.iter().map(|l| LineInput { amount: l.line_amount, ..l.input.clone() }).collect();
        input.tax_override = Some(TaxOverride::TaxDate { date: original.tax_date, reason: "Refund".to_owned() });
        let (origin_address_id, destination_address_id) = (self.id(), self.id());
        let transaction = Transaction {
            id: self.id(),
            company_id,
            code: refund_code,
            doc_type: DocType::RETURN_INVOICE,
            status: DocStatus::Committed,
            version: 1,
            locked: false,
            input,
            tax_date: if refund.use_tax_date_override { refund.date } else { original.tax_date },
            lines,
            adjustment_reason: "NotAdjusted",
            adjustment_description: String::new(),
            status_before_adjustment: None,
            created: now,
            modified: now,
            messages: Vec::new(),
            origin_address_id,
            destination_address_id,
        };
        self.transactions.push(transaction.clone());
        self.audits.insert(transaction.id, Audit::new(&request, &transaction));
        self.forget_beyond_cap();
        Ok(transaction)
    }

    /// Marks a document as reported to a tax authority (as Managed Returns does).
    pub fn lock(&mut self, company_id: i64, code: &str) -> Result<(), AvaError> {
        let index = self.find(company_id, code, None)?;
        self.transactions[index].locked = true;
        Ok(())
    }
}

fn locked(code: &str) -> AvaError {
    AvaError::new(400, "CannotModifyLockedTransaction", 1100, "Modifying a locked document is not allowed.")
        .describe(format!("'{code}' has been reported to a tax authority and is locked."))
}

/// A line scaled by `factor` (-1 for a full refund); `amounts` false keeps only the tax.
fn scale_line(line: &Line, factor: Decimal, amounts: bool) -> Line {
    let amount_factor = if amounts { factor } else { Decimal::ZERO };
    let scale = |d: Decimal, f: Decimal| calc::cents(d * f);
    let details = line
        .tax
        .details
        .iter()
        .map(|d| calc::DetailTax {
            taxable: scale(d.taxable, amount_factor),
            exempt: scale(d.exempt, amount_factor),
            non_taxable: scale(d.non_taxable, amount_factor),
            tax: scale(d.tax, factor),
            ..d.clone()
        })
        .collect::<Vec<_>>();
    let tax = details.iter().map(|d| d.tax).sum();
    Line {
        line_amount: scale(line.line_amount, amount_factor),
        discount_amount: scale(line.discount_amount, amount_factor),
        tax_calculated: tax,
        tax: LineTax {
            invoice_message: line.tax.invoice_message,
            taxable: scale(line.tax.taxable, amount_factor),
            exempt: scale(line.tax.exempt, amount_factor),
            non_taxable: scale(line.tax.non_taxable, amount_factor),
            tax,
            details,
        },
        input: LineInput { quantity: if amounts { line.input.quantity } else { Decimal::ZERO }, ..line.input.clone() },
        ..line.clone()
    }
}

/// Spreads an overriding tax amount over the lines in proportion to their taxable amounts
/// (the last taxable line takes the rounding remainder); `tax_calculated` keeps the
/// calculation.
/// `None` when a share overflows (lines of mixed signs can make one larger than the amount).
fn spread_tax(lines: &mut [Line], amount: Decimal) -> Option<()> {
    use crate::sandbox::tax::proportion;
    let taxable = lines.iter().try_fold(Decimal::ZERO, |sum, l| sum.checked_add(l.tax.taxable))?;
    let last = lines.iter().rposition(|l| l.tax.taxable != Decimal::ZERO);
    let mut given = Decimal::ZERO;
    for (i, line) in lines.iter_mut().enumerate() {
        let share = match last {
            Some(l) if l == i => amount.checked_sub(given)?,
            Some(_) if taxable != Decimal::ZERO => calc::cents(proportion(amount, line.tax.taxable, taxable)?),
            _ => Decimal::ZERO,
        };
        given = given.checked_add(share)?;
        let calculated = line.tax.tax;
        // Each jurisdiction keeps its proportion of the line's calculated tax.
        let mut left = share;
        let count = line.tax.details.len();
        for (j, detail) in line.tax.details.iter_mut().enumerate() {
            detail.tax = if j + 1 == count {
                left
            } else if calculated != Decimal::ZERO {
                calc::cents(proportion(share, detail.tax, calculated)?)
            } else {
                Decimal::ZERO
            };
            left = left.checked_sub(detail.tax)?;
        }
        line.tax.tax = share;
    }
    // What the document's totals add up must fit too.
    lines.iter().try_fold(Decimal::ZERO, |sum, l| sum.checked_add(l.tax.tax))?;
    Some(())
}

/// `RangeError` for money past what the simulator can add up.
fn too_large(field: &str, why: &str) -> AvaError {
    AvaError::range(field, why)
}

/// Checks the region of a US or Canadian address.
fn check_region(country: &str, region: &str, field: &str) -> Result<(), AvaError> {
    let ok = match country.to_ascii_uppercase().as_str() {
        "US" => reference::us_state(region).is_some(),
        "CA" => reference::CA_PROVINCES
            .iter()
            .any(|(c, n)| c.eq_ignore_ascii_case(region) || n.eq_ignore_ascii_case(region)),
        _ => return Ok(()),
    };
    if ok {
        Ok(())
    } else if region.trim().is_empty() {
        Err(AvaError::required(field))
    } else {
        Err(AvaError::new(400, "InvalidCountryRegion", 126, format!("'{region}' is not a region of {country}."))
            .describe("Use the two-letter state or province code, e.g. CA.")
            .refers_to(field))
    }
}

/// Whether a US postal code is written as one (`12345` or `12345-6789`).
pub fn us_postal_code_ok(code: &str) -> bool {
    let b = code.trim().as_bytes();
    (b.len() == 5 && b.iter().all(u8::is_ascii_digit))
        || (b.len() == 10 && b[5] == b'-' && b[..5].iter().chain(&b[6..]).all(u8::is_ascii_digit))
}

/// Fills what the simulator can infer (country US, the state of a known ZIP) and refuses an
/// address too incomplete or malformed to place.
pub fn complete_address(table: &Table, mut address: Address, field: &str) -> Result<Address, AvaError> {
    if address.country.trim().is_empty() {
        address.country = "US".to_owned();
    }
    // Alpha-3 codes (`CAN`, `GBR`) are taken as their alpha-2 codes, as AvaTax does.
    address.country = crate::sandbox::tax::canonical_country(&address.country);
    if address.country != "US" {
        return Ok(address);
    }
    let postal = address.postal_code.trim().to_owned();
    if !postal.is_empty() && !us_postal_code_ok(&postal) {
        return Err(AvaError::new(400, "InvalidPostalCode", 317, format!("'{postal}' is not a valid US postal code."))
            .describe("A US postal code is 5 digits, or ZIP+4 written 12345-6789.")
            .refers_to(format!("{field}.postalCode")));
    }
    if address.region.trim().is_empty() && !postal.is_empty() {
        // The engine's table knows the state of a ZIP.
        let lookup = crate::sandbox::tax::Address::us("", &postal);
        if let Ok(rates) = table.rates(&lookup) {
            address.region = rates.region;
        }
    }
    if address.region.trim().is_empty()
        || (postal.is_empty() && (address.line1.trim().is_empty() || address.city.trim().is_empty()))
    {
        return Err(AvaError::new(400, "InvalidAddress", 309, "The address value was incomplete.")
            .describe("Give a postal code and region, or line1, city and region.")
            .refers_to(field));
    }
    let Some((code, _, _)) = reference::us_state(&address.region) else {
        return Err(AvaError::new(
            400,
            "InvalidCountryRegion",
            126,
            format!("'{}' is not a US state.", address.region),
        )
        .describe("Use the two-letter state code, e.g. CA.")
        .refers_to(format!("{field}.region")));
    };
    address.region = code.to_owned();
    // A ZIP of another state is accepted (AvaTax answers 201 and places the address by its
    // state), but one no state uses is refused as AvaTax refuses `00000, PA`.
    if !postal.is_empty() && !table.us_zip_has_state(&postal) {
        return Err(AvaError::new(400, "GetTaxError", 300, "Zip is not valid for the state")
            .describe(format!("The postal code {postal} is not valid for {code}."))
            .refers_to(format!("{field}.postalCode")));
    }
    Ok(address)
}

pub fn add_years(date: Date, years: i32) -> Date {
    date.replace_year(date.year() + years).unwrap_or(date)
}

/// `LOS ANGELES` → `Los Angeles`: how AvaTax writes the names of places.
pub fn title_case(name: &str) -> String {
    name.split(' ')
        .map(|w| {
            let lower = w.to_lowercase();
            let mut chars = lower.chars();
            chars.next().map(|c| c.to_uppercase().collect::<String>() + chars.as_str()).unwrap_or_default()
        })
        .collect::<Vec<_>>()
        .join(" ")
}
