#!/usr/bin/env node
// Smoke test: the official AvaTax JavaScript SDK (npm `avatax`, Node) against `opsdeck sandbox`.
//
// Usage: node avatax_node.mjs [AVATAX_BASE_URL]
//   The URL (e.g. http://127.0.0.1:7703) comes from argv[2], else $OPSDECK_AVATAX_URL, else
//   http://127.0.0.1:7703. The credentials are the sandbox's unless $AVATAX_ACCOUNT_ID /
//   $AVATAX_LICENSE_KEY say otherwise. The SDK is imported normally, or from
//   $AVATAX_JS_DIR/node_modules when that is set (the runner installs it in a temporary directory).
//
// Checks ping, create (a quote and an invoice), get, commit, list with $filter and paging, refund,
// void and the error of an illegal transition, as the SDK reports it. Prints one line per check
// and exits 1 with the reason at the first failure. Codes are unique per run.

import { createRequire } from 'node:module';
import { randomBytes } from 'node:crypto';
import path from 'node:path';

async function loadAvatax() {
  if (process.env.AVATAX_JS_DIR) {
    const require = createRequire(path.join(path.resolve(process.env.AVATAX_JS_DIR), 'package.json'));
    return require('avatax');
  }
  const mod = await import('avatax');
  return mod.default ?? mod;
}

class CheckFailed extends Error {}

function expect(cond, what) {
  if (!cond) throw new CheckFailed(what);
}

function ok(name, detail = '') {
  console.log(`ok   [node] ${name}${detail ? ` (${detail})` : ''}`);
}

async function expectError(promise, code, what) {
  try {
    await promise;
  } catch (e) {
    expect(e.code === code, `${what}: expected error ${code}, got ${e.code}: ${e.message}`);
    return e;
  }
  throw new CheckFailed(`${what}: expected error ${code}, but the call succeeded`);
}

async function main() {
  const url = process.argv[2] ?? process.env.OPSDECK_AVATAX_URL ?? 'http://127.0.0.1:7703';
  const accountId = process.env.AVATAX_ACCOUNT_ID ?? '1100000001';
  const licenseKey = process.env.AVATAX_LICENSE_KEY ?? 'SANDBOXLICENSEKEY';
  const Avatax = await loadAvatax();
  const config = { appName: 'opsdeck-smoke', appVersion: '1.0', environment: url, machineName: 'box' };
  const client = new Avatax(config).withSecurity({ accountId, licenseKey });
  const run = randomBytes(4).toString('hex');
  const today = new Date().toISOString().slice(0, 10);
  console.log(`avatax (node) against ${url}`);

  const ping = await client.ping();
  expect(ping.authenticated === true, `ping: expected authenticated, got ${JSON.stringify(ping)}`);
  ok('ping', ping.authenticationType);

  const stranger = new Avatax(config).withSecurity({ accountId, licenseKey: 'WRONG' });
  const strangerPing = await stranger.ping();
  expect(strangerPing.authenticated === false, `ping with a wrong key: got ${JSON.stringify(strangerPing)}`);
  await expectError(stranger.listTransactionsByCompany({ companyCode: 'DEFAULT' }), 'AuthenticationException', 'wrong key');
  ok('wrong key', 'ping says unauthenticated, other calls AuthenticationException');

  const model = (code, type, commit = false) => ({
    type, companyCode: 'DEFAULT', code, date: today, customerCode: 'ABC', purchaseOrderNo: `PO-${run}`,
    addresses: { SingleLocation: { line1: '123 Main Street', city: 'Irvine', region: 'CA', country: 'US', postalCode: '92615' } },
    lines: [{ number: '1', quantity: 1, amount: 100, taxCode: 'PS081282', itemCode: 'Y0001', description: 'Yarn' }],
    commit, currencyCode: 'USD', description: 'Yarn',
  });

  const quote = await client.createTransaction({ model: model(`js-quote-${run}`, 'SalesOrder') });
  expect(quote.status === 'Temporary' && quote.totalTax === 7.75, `quote: got ${quote.status} ${quote.totalTax}`);
  await expectError(client.getTransactionByCode({ companyCode: 'DEFAULT', transactionCode: `js-quote-${run}` }),
    'EntityNotFoundError', 'a quote is not stored');
  ok('create a quote', '7.75 tax, not stored');

  const code = `js-${run}`;
  const created = await client.createTransaction({ model: model(code, 'SalesInvoice') });
  expect(created.status === 'Saved', `create: expected Saved, got ${created.status}`);
  expect(created.lines[0].details.length === 4, 'create: expected 4 jurisdiction details');
  ok('create an invoice', `id ${created.id}, tax ${created.totalTax}`);

  const got = await client.getTransactionByCode({ companyCode: 'DEFAULT', transactionCode: code, include: 'Lines' });
  expect(got.id === created.id, `get: expected id ${created.id}, got ${got.id}`);
  ok('get by code');

  const committed = await client.commitTransaction({ companyCode: 'DEFAULT', transactionCode: code, model: { commit: true } });
  expect(committed.status === 'Committed', `commit: expected Committed, got ${committed.status}`);
  ok('commit');

  const listed = await client.listTransactionsByCompany({
    companyCode: 'DEFAULT', filter: `code eq '${code}' and status eq Committed`, top: 5,
  });
  expect(listed['@recordsetCount'] === 1 && listed.value[0].code === code, `list: got ${JSON.stringify(listed).slice(0, 300)}`);
  const page = await client.listTransactionsByCompany({ companyCode: 'DEFAULT', top: 2, orderBy: 'id DESC' });
  expect(page.value.length === 2 && typeof page['@nextLink'] === 'string', 'list: expected a page of 2 and @nextLink');
  ok('list with $filter and $top', `${page['@recordsetCount']} in the last 30 days`);

  const refund = await client.refundTransaction({
    companyCode: 'DEFAULT', transactionCode: code,
    model: { refundTransactionCode: `${code}-r`, refundType: 'Percentage', refundPercentage: 50, refundDate: today },
  });
  expect(refund.type === 'ReturnInvoice' && refund.totalAmount === -50, `refund: got ${refund.type} ${refund.totalAmount}`);
  ok('refund 50 %', `${refund.totalAmount} / ${refund.totalTax}`);

  const voided = await client.voidTransaction({ companyCode: 'DEFAULT', transactionCode: code, model: { code: 'DocVoided' } });
  expect(voided.status === 'Cancelled', `void: expected Cancelled, got ${voided.status}`);
  ok('void');

  const refused = await expectError(
    client.commitTransaction({ companyCode: 'DEFAULT', transactionCode: code, model: { commit: true } }),
    'GetTaxError', 'commit a voided document');
  expect(Array.isArray(refused.details) && refused.details.length > 0, 'the error carries details');
  ok('commit a voided document is refused', refused.code);

  console.log('node: all checks passed');
  return 0;
}

main().then(
  (code) => process.exit(code),
  (e) => {
    if (e instanceof CheckFailed) {
      console.error(`FAIL [node] ${e.message}`);
    } else {
      console.error(`FAIL [node] unexpected ${e?.name}: ${e?.message}`, e);
    }
    process.exit(1);
  },
);
