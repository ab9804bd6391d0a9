// Smoke test: the official TaxJar Node SDK (npm `taxjar` 5.x) against `opsdeck sandbox`.
//
// Usage: TAXJAR_JS_DIR=<dir with node_modules/taxjar> node taxjar_node.mjs [TAXJAR_BASE_URL]
// Calculates the docs' example, then creates, lists, updates and deletes an order. Prints one
// line per check and exits 1 at the first failure.
import { createRequire } from "node:module";
import { randomUUID } from "node:crypto";
import path from "node:path";

const require = createRequire(path.join(process.env.TAXJAR_JS_DIR || process.cwd(), "package.json"));
const Taxjar = require("taxjar");

const url = (process.argv[2] || process.env.OPSDECK_TAXJAR_URL || "http://127.0.0.1:7704").replace(/\/$/, "");
const client = new Taxjar({ apiKey: process.env.TAXJAR_SANDBOX_TOKEN || "sandbox-taxjar-token", apiUrl: url });

function check(name, condition, detail = "") {
  if (!condition) {
    console.error(`FAIL node: ${name} ${detail}`);
    process.exit(1);
  }
  console.log(`ok node: ${name}`);
}

const { tax } = await client.taxForOrder({
  from_country: "US", from_zip: "92093", from_state: "CA", to_country: "US", to_zip: "90002", to_state: "CA",
  amount: 15, shipping: 1.5,
  nexus_addresses: [{ id: "Main", country: "US", zip: "92093", state: "CA" }],
  line_items: [{ id: "1", quantity: 1, product_tax_code: "20010", unit_price: 15, discount: 0 }],
});
check("calculate", tax.amount_to_collect === 1.35 && tax.has_nexus === true, JSON.stringify(tax));

const id = "node-" + randomUUID().slice(0, 10);
const created = await client.createOrder({
  transaction_id: id, transaction_date: "2015/05/14", to_country: "US", to_zip: "90002", to_state: "CA",
  amount: 16.5, shipping: 1.5, sales_tax: 1.35,
  line_items: [{ id: "1", quantity: 1, unit_price: 15, sales_tax: 1.35 }],
});
check("order create", created.order.transaction_id === id, JSON.stringify(created));
const listed = await client.listOrders({ from_transaction_date: "2015/05/01", to_transaction_date: "2015/05/31" });
check("order list", listed.orders.includes(id), JSON.stringify(listed));
const updated = await client.updateOrder({ transaction_id: id, amount: 20, shipping: 5 });
check("order update", Number(updated.order.amount) === 20, JSON.stringify(updated));
const deleted = await client.deleteOrder(id);
check("order delete", deleted.order.transaction_id === id, JSON.stringify(deleted));
try {
  await client.showOrder(id);
  check("deleted order is gone", false);
} catch (e) {
  check("deleted order is gone", e.status === 404, String(e));
}
console.log("PASSED node");
