//! Avalara AvaTax REST v2 (spec part C). Wire facts: `shared/api/avatax.md`.
//!
//! Lists answer a FetchResult (`value`, `@recordsetCount`, `@nextLink`) and page with `$top` and
//! `$skip`. Transactions are addressed by company code and transaction code (strings); the other
//! company-scoped records by the numeric company id.

use super::{BodyEncoding, Method, Operation, Paging, Param, Service};

const COMPANY_ID: Param = Param::path("companyId", "numeric company id (from companies_list)").int();
const COMPANY_CODE: Param = Param::path("companyCode", "company code, e.g. DEFAULT");
const TRANSACTION_CODE: Param = Param::path("transactionCode", "transaction code");
const FILTER: Param = Param::query("$filter", "OData filter, e.g. region eq 'CA' and isActive eq true");
const TOP: Param = Param::query("$top", "maximum rows per page (0: no explicit limit)").int().range(0.0, 1000.0);
const SKIP: Param = Param::query("$skip", "rows to skip").int().min(0.0);
const ORDER_BY: Param = Param::query("$orderBy", "sort, e.g. id ASC or name DESC, comma-separated");

/// AvaTax's document types, in the order of its numeric enum (the simulator reads both forms).
/// The reasons an adjustment may give, in the service's numbering from 1 (0, NotAdjusted, is
/// what an unadjusted transaction says and no adjustment may give).
pub const ADJUSTMENT_REASONS: &[&str] = &[
    "SourcingIssue",
    "ReconciledWithGeneralLedger",
    "ExemptCertApplied",
    "PriceAdjusted",
    "ProductReturned",
    "ProductExchanged",
    "BadDebt",
    "Other",
    "Offline",
];

pub const DOCUMENT_TYPES: &[&str] = &[
    "SalesOrder",
    "SalesInvoice",
    "PurchaseOrder",
    "PurchaseInvoice",
    "ReturnOrder",
    "ReturnInvoice",
    "InventoryTransferOrder",
    "InventoryTransferInvoice",
    "ReverseChargeOrder",
    "ReverseChargeInvoice",
    "CustomsInvoice",
    "CustomsOrder",
    "InventoryTransferOutboundInvoice",
    "InventoryTransferOutboundOrder",
];
/// Picks one document of a code; the service assumes the sales invoice when it is left out.
const DOCUMENT_TYPE: Param =
    Param::query("documentType", "which document of this code").one_of(DOCUMENT_TYPES).default("SalesInvoice");
const TRANSACTION_INCLUDES: &[&str] = &[
    "Lines",
    "Details",
    "Summary",
    "Addresses",
    "SummaryOnly",
    "LinesOnly",
    "TaxDetailsByTaxType",
    "AccountPayableSalesTaxDetails",
];
const TRANSACTION_INCLUDE: Param =
    Param::query("$include", "extra parts, comma-separated: Lines, Details, Summary, Addresses, SummaryOnly...")
        .comma_joined()
        .one_of(TRANSACTION_INCLUDES);
const COMPANY_INCLUDE: Param =
    Param::query("$include", "nested records to add, comma-separated: Contacts, Locations, Nexus, Settings...")
        .comma_joined()
        .one_of(&["Contacts", "Items", "Locations", "Nexus", "Settings", "TaxCodes", "TaxRules", "UPC", "Parameters"]);

const fn op(
    name: &'static str,
    resource: &'static str,
    method: Method,
    path: &'static str,
    summary: &'static str,
) -> Operation {
    Operation::base(Service::Avatax, name, resource, method, path, summary)
}

pub(super) static OPERATIONS: &[Operation] = &[
    Operation {
        params: &[
            FILTER,
            TOP,
            SKIP,
            ORDER_BY,
            COMPANY_INCLUDE,
        ],
        paging: Paging::ODataNextLink,
        id_field: Some("id"),
        ..op(
            "companies_list",
            "companies",
            Method::Get,
            "/api/v2/companies",
            "list companies visible to the current user",
        )
    },
    Operation {
        // The real template names this segment `{id}`; it is called `companyId` here so that a
        // company selected in the browser fills it like every other company-scoped form.
        params: &[
            COMPANY_ID,
            Param::query(
                "$include",
                "nested records to add, comma-separated: Contacts, Locations, Nexus, Settings...",
            )
            .comma_joined()
            .one_of(&[
                "Contacts",
                "Items",
                "Locations",
                "Nexus",
                "Settings",
                "TaxCodes",
                "TaxRules",
                "UPC",
                "Parameters",
                "FetchDeleted",
            ]),
        ],
        ..op(
            "companies_get",
            "companies",
            Method::Get,
            "/api/v2/companies/{companyId}",
            "retrieve a company by id",
        )
    },
    Operation {
        params: &[Param::whole_body(
            "companies",
            "[{\"companyCode\":\"ACME\",\"name\":\"Acme Inc\",\"defaultCountry\":\"US\"}]",
        )
        .json()
        .template(r#"[{"companyCode":"","name":"","defaultCountry":"US"}]"#)
        .required()],
        body: BodyEncoding::Json,
        ..op(
            "companies_create",
            "companies",
            Method::Post,
            "/api/v2/companies",
            "create companies (the body is an array)",
        )
    },
    Operation {
        params: &[
            COMPANY_CODE,
            Param::query(
                "$filter",
                "OData filter; without a date criterion only the last 30 days are searched",
            ),
            TOP,
            SKIP,
            ORDER_BY,
            TRANSACTION_INCLUDE,
            Param::query("dataSourceId", "only transactions from this data source").int(),
        ],
        paging: Paging::ODataNextLink,
        id_field: Some("code"),
        ..op(
            "transactions_list",
            "transactions",
            Method::Get,
            "/api/v2/companies/{companyCode}/transactions",
            "list transactions of a company with filters",
        )
    },
    Operation {
        params: &[COMPANY_CODE, TRANSACTION_CODE, DOCUMENT_TYPE, TRANSACTION_INCLUDE],
        ..op(
            "transactions_get",
            "transactions",
            Method::Get,
            "/api/v2/companies/{companyCode}/transactions/{transactionCode}",
            "one transaction by company code and transaction code",
        )
    },
    Operation {
        params: &[
            // ForceTimeout (create only) makes the service wait 30 s and fail: for timeout tests.
            Param::query(
                "$include",
                "extra parts, comma-separated: Lines, Details, Summary, Addresses, ForceTimeout...",
            )
            .comma_joined()
            .one_of(&[
                "Lines",
                "Details",
                "Summary",
                "Addresses",
                "SummaryOnly",
                "LinesOnly",
                "TaxDetailsByTaxType",
                "AccountPayableSalesTaxDetails",
                "ForceTimeout",
            ]),
            Param::body("type", "document type; *Order types are calculated but not stored")
                .one_of(DOCUMENT_TYPES)
                .default("SalesOrder"),
            Param::body("code", "transaction code (empty: a GUID is assigned)"),
            Param::body("companyCode", "company code (empty: the account's default company)"),
            Param::body("date", "document date, YYYY-MM-DD").required(),
            Param::body("customerCode", "customer code, links exemption certificates").required(),
            Param::body(
                "addresses",
                "{\"shipFrom\":{...},\"shipTo\":{\"line1\":\"...\",\"city\":\"...\",\"region\":\"CA\",\"country\":\"US\",\"postalCode\":\"...\"}}",
            )
            .json(),
            Param::body(
                "lines",
                "[{\"number\":\"1\",\"quantity\":1,\"amount\":100,\"taxCode\":\"P0000000\"}]",
            )
            .json()
        .template(r#"[{"number":"1","quantity":1,"amount":0,"taxCode":""}]"#)
            .required(),
            Param::body("commit", "invoice types only: create it already committed")
                .boolean()
                .default("false"),
            Param::body("currencyCode", "ISO 4217 currency, e.g. USD"),
            Param::body("purchaseOrderNo", "purchase order number"),
            Param::body("exemptionNo", "exemption certificate number; makes the document exempt"),
            Param::body("entityUseCode", "exempt entity use code"),
            Param::body("discount", "discount applied to lines marked discounted").num(),
            Param::body("referenceCode", "free-text reference"),
            Param::body("reportingLocationCode", "location code for reporting"),
            Param::body("salespersonCode", "salesperson code"),
            Param::body("description", "document description"),
            Param::body("email", "customer email"),
            Param::body("businessIdentificationNo", "buyer's VAT or business id"),
            Param::body("isSellerImporterOfRecord", "seller is importer of record (cross-border)")
                .boolean(),
            Param::body(
                "taxOverride",
                "{\"type\":\"TaxDate\",\"taxDate\":\"2024-01-31\",\"reason\":\"...\"}",
            )
            .json(),
        ],
        body: BodyEncoding::Json,
        ..op(
            "transactions_create",
            "transactions",
            Method::Post,
            "/api/v2/transactions/create",
            "create a transaction and calculate tax for sales, purchases or returns",
        )
    },
    Operation {
        params: &[
            COMPANY_CODE,
            TRANSACTION_CODE,
            DOCUMENT_TYPE,
            TRANSACTION_INCLUDE,
            Param::body("adjustmentReason", "why the transaction is adjusted")
                .required()
                .one_of(ADJUSTMENT_REASONS),
            Param::body("adjustmentDescription", "explanation; required when the reason is Other"),
            Param::body(
                "newTransaction",
                "the corrected transaction, same fields as transactions_create",
            )
            .json()
            .required(),
        ],
        body: BodyEncoding::Json,
        ..op(
            "transactions_adjust",
            "transactions",
            Method::Post,
            "/api/v2/companies/{companyCode}/transactions/{transactionCode}/adjust",
            "replace a transaction with corrected data (the old version is kept as Adjusted)",
        )
    },
    Operation {
        params: &[
            COMPANY_CODE,
            TRANSACTION_CODE,
            DOCUMENT_TYPE,
            TRANSACTION_INCLUDE,
            Param::body("commit", "true commits the transaction")
                .boolean()
                .required(),
        ],
        body: BodyEncoding::Json,
        ..op(
            "transactions_commit",
            "transactions",
            Method::Post,
            "/api/v2/companies/{companyCode}/transactions/{transactionCode}/commit",
            "commit a transaction, making it final and reportable",
        )
    },
    Operation {
        params: &[
            COMPANY_CODE,
            TRANSACTION_CODE,
            DOCUMENT_TYPE,
            TRANSACTION_INCLUDE,
            Param::body("code", "void reason; DocVoided is the usual one")
                .required()
                .one_of(&[
                    "Unspecified",
                    "PostFailed",
                    "DocDeleted",
                    "DocVoided",
                    "AdjustmentCancelled",
                ]),
        ],
        body: BodyEncoding::Json,
        destructive: true,
        ..op(
            "transactions_void",
            "transactions",
            Method::Post,
            "/api/v2/companies/{companyCode}/transactions/{transactionCode}/void",
            "void a transaction (its status becomes Cancelled)",
        )
    },
    Operation {
        params: &[
            COMPANY_CODE,
            TRANSACTION_CODE,
            DOCUMENT_TYPE,
            TRANSACTION_INCLUDE,
            Param::query("useTaxDateOverride", "use the refund date as the tax date").boolean(),
            Param::body("refundDate", "date of the refund, YYYY-MM-DD").required(),
            Param::body("refundTransactionCode", "code of the new ReturnInvoice"),
            Param::body("refundType", "how much is refunded").one_of(&[
                "Full",
                "Partial",
                "TaxOnly",
                "Percentage",
            ]),
            Param::body("refundPercentage", "percent refunded, for Percentage refunds")
                .num()
                .range(0.0, 100.0),
            Param::body("refundLines", "line numbers refunded, for Partial refunds").list(),
            Param::body("referenceCode", "free-text reference"),
        ],
        body: BodyEncoding::Json,
        destructive: true,
        ..op(
            "transactions_refund",
            "transactions",
            Method::Post,
            "/api/v2/companies/{companyCode}/transactions/{transactionCode}/refund",
            "refund a committed transaction with a new ReturnInvoice",
        )
    },
    Operation {
        params: &[COMPANY_CODE, TRANSACTION_CODE],
        ..op(
            "transactions_audit",
            "transactions",
            Method::Get,
            "/api/v2/companies/{companyCode}/transactions/{transactionCode}/audit",
            "the original API call that created a transaction, for audit",
        )
    },
    Operation {
        params: &[
            COMPANY_ID,
            FILTER,
            TOP,
            SKIP,
            ORDER_BY,
            Param::query(
                "$include",
                "nested records to add, comma-separated: certificates, billTos, shipTos...",
            )
            .comma_joined()
            .one_of(&[
                "certificates",
                "attributes",
                "active_certificates",
                "histories",
                "logs",
                "jobs",
                "billTos",
                "shipTos",
                "shipToStates",
                "custom_fields",
            ]),
        ],
        paging: Paging::ODataNextLink,
        id_field: Some("customerCode"),
        ..op(
            "customers_list",
            "customers",
            Method::Get,
            "/api/v2/companies/{companyId}/customers",
            "list customers of a company",
        )
    },
    Operation {
        params: &[
            COMPANY_ID,
            Param::whole_body(
                "customers",
                "[{\"customerCode\":\"C1\",\"name\":\"...\",\"line1\":\"...\",\"city\":\"...\",\"region\":\"CA\",\"postalCode\":\"...\",\"country\":\"US\"}]",
            )
            .json()
        .template(r#"[{"customerCode":"","name":"","line1":"","city":"","region":"","postalCode":"","country":"US"}]"#)
            .required(),
        ],
        body: BodyEncoding::Json,
        ..op(
            "customers_create",
            "customers",
            Method::Post,
            "/api/v2/companies/{companyId}/customers",
            "create one or more customers (the body is an array)",
        )
    },
    Operation {
        params: &[
            COMPANY_ID,
            FILTER,
            TOP,
            SKIP,
            ORDER_BY,
            Param::query(
                "$include",
                "nested records to add, comma-separated: customers, po_numbers...",
            )
            .comma_joined()
            .one_of(&[
                "customers",
                "po_numbers",
                "attributes",
                "histories",
                "jobs",
                "logs",
                "invalid_reasons",
                "custom_fields",
                "jurisdictions",
            ]),
        ],
        paging: Paging::ODataNextLink,
        id_field: Some("id"),
        ..op(
            "certificates_list",
            "certificates",
            Method::Get,
            "/api/v2/companies/{companyId}/certificates",
            "list exemption certificates of a company",
        )
    },
    Operation {
        params: &[
            COMPANY_ID,
            Param::query(
                "$preValidatedExemptionReason",
                "the exemption reason is already validated",
            )
            .boolean(),
            Param::whole_body(
                "certificates",
                "[{\"signedDate\":\"2024-01-01\",\"exemptionReason\":{\"name\":\"RESALE\"},\"exposureZone\":{\"name\":\"California\"},\"customers\":[{\"customerCode\":\"C1\"}]}]",
            )
            .json()
        .template(r#"[{"signedDate":"","exemptionReason":{"name":""},"exposureZone":{"name":""},"customers":[{"customerCode":""}]}]"#)
            .required(),
        ],
        body: BodyEncoding::Json,
        ..op(
            "certificates_create",
            "certificates",
            Method::Post,
            "/api/v2/companies/{companyId}/certificates",
            "create exemption certificates (the body is an array)",
        )
    },
    Operation {
        params: &[
            COMPANY_ID,
            FILTER,
            TOP,
            SKIP,
            ORDER_BY,
            Param::query("$include", "Parameters: add nexus parameters")
                .comma_joined()
                .one_of(&["Parameters"]),
        ],
        paging: Paging::ODataNextLink,
        id_field: Some("id"),
        ..op(
            "nexus_list",
            "nexus",
            Method::Get,
            "/api/v2/companies/{companyId}/nexus",
            "list nexus declarations of a company",
        )
    },
    Operation {
        params: &[
            COMPANY_ID,
            Param::whole_body(
                "nexus",
                "[{\"country\":\"US\",\"region\":\"CA\",\"jurisTypeId\":\"STA\",\"jurisCode\":\"06\",\"jurisName\":\"CALIFORNIA\"}]",
            )
            .json()
        .template(r#"[{"country":"US","region":"","jurisTypeId":"STA","jurisCode":"","jurisName":""}]"#)
            .required(),
        ],
        body: BodyEncoding::Json,
        ..op(
            "nexus_create",
            "nexus",
            Method::Post,
            "/api/v2/companies/{companyId}/nexus",
            "declare nexus for a company (the body is an array)",
        )
    },
    Operation {
        params: &[
            Param::query("$filter", "OData filter, e.g. taxCode startswith 'PF'"),
            TOP,
            SKIP,
            ORDER_BY,
        ],
        paging: Paging::ODataNextLink,
        id_field: Some("taxCode"),
        ..op(
            "tax_codes_list",
            "tax codes",
            Method::Get,
            "/api/v2/definitions/taxcodes",
            "list available tax codes",
        )
    },
    Operation {
        params: &[
            Param::query("line1", "street address").required(),
            Param::query("line2", "address line 2"),
            Param::query("line3", "address line 3"),
            Param::query("city", "city"),
            Param::query("region", "state or province code, e.g. CA").required(),
            Param::query("postalCode", "postal code").required(),
            Param::query("country", "ISO 3166 two-letter country code, e.g. US").required(),
        ],
        ..op(
            "tax_rates_by_address",
            "tax rates",
            Method::Get,
            "/api/v2/taxrates/byaddress",
            "sales tax rates for an address, without a transaction",
        )
    },
    Operation {
        params: &[
            Param::query("country", "ISO 3166 two-letter country code (US only)").required(),
            Param::query("postalCode", "US postal code").required(),
        ],
        ..op(
            "tax_rates_by_postal_code",
            "tax rates",
            Method::Get,
            "/api/v2/taxrates/bypostalcode",
            "sales tax rates for a US postal code (rate-limited)",
        )
    },
    Operation {
        // The route also takes POST with a JSON body (adding latitude/longitude); GET with query
        // parameters is the read-only form and covers the spec's purpose.
        params: &[
            Param::query("line1", "street address"),
            Param::query("line2", "address line 2"),
            Param::query("line3", "address line 3"),
            Param::query("city", "city"),
            Param::query("region", "state or province code, e.g. CA"),
            Param::query("postalCode", "postal code"),
            Param::query("country", "ISO 3166 two-letter country code (US or CA)"),
            Param::query("textCase", "letter case of the resolved address")
                .one_of(&["Default", "Upper", "Mixed"])
                .default("Default"),
        ],
        // An address needs a street or a postal code; AvaTax refuses one with neither.
        at_least_one: &["line1", "postalCode"],
        ..op(
            "addresses_resolve",
            "addresses",
            Method::Get,
            "/api/v2/addresses/resolve",
            "validate and resolve an address, with coordinates",
        )
    },
    Operation {
        ..op(
            "utilities_ping",
            "utilities",
            Method::Get,
            "/api/v2/utilities/ping",
            "test connectivity and whether the credentials authenticate",
        )
    },
];
