// Smoke test: the official Deepgram Node SDK (npm `@deepgram/sdk` 5.x) against `opsdeck sandbox`.
//
// Usage: DEEPGRAM_JS_DIR=<dir with node_modules/@deepgram/sdk> node deepgram_node.mjs [BASE_URL [CONTROL_URL]]
//        (default $OPSDECK_DEEPGRAM_URL, else http://127.0.0.1:7706; the control URL, when given, is
//        used once to reset the Deepgram simulator to its seeded state before the checks)
// The client's `environment` points every REST base at the sandbox, so no request leaves loopback.
// Management: projects list/get/update/delete (a deleted project's get is the SDK's 404 with
// Deepgram's body), keys (created with comment, scopes and a time to live or an expiration date;
// the secret shown once and never listed; the new key authenticates a client of its own; a member
// key is refused the project's deletion; a deleted key is refused at once), members (remove one;
// the last owner cannot go), balances, models (STT and TTS), usage over a date range with filters,
// including a transcription made here. Listen: a WAV built here in a Buffer (duration, channels and
// sample rate read from it; diarize, punctuate, utterances, paragraphs and sentiment shaping the
// answer), undecodable bytes (the SDK's BadRequestError with Deepgram's body), a URL served on
// loopback by an http server here, and a non-loopback URL (refused before any fetch). Speak:
// linear16/wav, mulaw and alaw without a container, lengths in proportion, speak -> transcribe
// round trips, an invalid format. Read: sentiment, topics, intents and summary of a paragraph; a
// non-English language refused. A wrong key is 401. Prints one line per check and exits 1 at the
// first failure.
import { createRequire } from "node:module";
import { randomUUID } from "node:crypto";
import http from "node:http";
import path from "node:path";

const require = createRequire(path.join(process.env.DEEPGRAM_JS_DIR || process.cwd(), "package.json"));
const sdk = require("@deepgram/sdk");
const { DeepgramClient, DeepgramError } = sdk;
const { BadRequestError } = sdk.Deepgram; // the API's mapped errors live in the `Deepgram` namespace

const baseUrl = (process.argv[2] || process.env.OPSDECK_DEEPGRAM_URL || "http://127.0.0.1:7706").replace(/\/+$/, "");
const control = (process.argv[3] || "").replace(/\/+$/, "");
const KEY = process.env.DEEPGRAM_SANDBOX_KEY || "sandbox-deepgram-key";
const RUN = randomUUID().slice(0, 10);
let checks = 0;

function check(name, condition, detail = "") {
  if (!condition) {
    console.error(`FAIL deepgram node: ${name} ${detail}`.slice(0, 2000));
    process.exit(1);
  }
  checks += 1;
  console.log(`ok deepgram node: ${name}`);
}

function client(apiKey = KEY) {
  const ws = baseUrl.replace(/^http/, "ws");
  return new DeepgramClient({
    apiKey,
    environment: { base: baseUrl, production: ws, agent: ws, agentRest: baseUrl },
    timeoutInSeconds: 30,
  });
}

// The SDK's error from `call`, or a string saying what happened instead.
async function refused(call) {
  try {
    const answer = await call();
    return `WRONG: no error, got ${JSON.stringify(answer)}`.slice(0, 600);
  } catch (e) {
    return e instanceof DeepgramError ? e : `WRONG ${e?.constructor?.name}: ${e?.message || e}`;
  }
}

// `e` is the SDK's DeepgramError with HTTP `status`, a body carrying `fields`, and the body's
// request id in the `dg-request-id` header.
function apiError(name, e, status, fields = {}) {
  const body = e?.body;
  let ok = e instanceof DeepgramError && e.statusCode === status && body && typeof body === "object";
  ok =
    ok &&
    Object.entries(fields).every(([k, v]) => (typeof v === "function" ? v(body[k]) : body[k] === v)) &&
    Boolean(body.request_id) &&
    e.rawResponse?.headers?.get("dg-request-id") === body.request_id;
  check(name, ok, `got ${e?.statusCode} ${JSON.stringify(body) ?? e}`.slice(0, 800));
}

// A mono or multi-channel 16-bit PCM WAV of a tone, built by hand.
function wavBytes(seconds, rate, channels) {
  const frames = Math.round(seconds * rate);
  const data = Buffer.alloc(frames * channels * 2);
  for (let i = 0; i < frames; i++) {
    const v = Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / rate));
    for (let c = 0; c < channels; c++) data.writeInt16LE(v, (i * channels + c) * 2);
  }
  const h = Buffer.alloc(44);
  h.write("RIFF", 0);
  h.writeUInt32LE(36 + data.length, 4);
  h.write("WAVE", 8);
  h.write("fmt ", 12);
  h.writeUInt32LE(16, 16);
  h.writeUInt16LE(1, 20);
  h.writeUInt16LE(channels, 22);
  h.writeUInt32LE(rate, 24);
  h.writeUInt32LE(rate * channels * 2, 28);
  h.writeUInt16LE(channels * 2, 32);
  h.writeUInt16LE(16, 34);
  h.write("data", 36);
  h.writeUInt32LE(data.length, 40);
  return Buffer.concat([h, data]);
}

const wordsOf = (text) =>
  text
    .split(/\s+/)
    .map((w) => w.toLowerCase().replace(/[^a-z0-9']/g, ""))
    .filter(Boolean);
const isoDay = (d) => d.toISOString().slice(0, 10);
const daysAgo = (n) => isoDay(new Date(Date.now() - n * 86_400_000));

if (control) {
  const r = await fetch(`${control}/reset?service=deepgram`, { method: "POST", signal: AbortSignal.timeout(10_000) });
  check("the control port reset the Deepgram simulator", r.ok && (await r.text()).includes("deepgram"));
}

const dg = client();
const projectsApi = dg.manage.v1.projects;

// --- auth ---------------------------------------------------------------------------------------
apiError("a wrong key is 401 INVALID_AUTH", await refused(() => client("not-a-key").manage.v1.projects.list()), 401, {
  err_code: "INVALID_AUTH",
  err_msg: "Invalid credentials.",
});

// --- projects -----------------------------------------------------------------------------------
const { projects } = await projectsApi.list();
check("projects.list", projects.length >= 2 && projects.every((p) => p.project_id && p.name), JSON.stringify(projects));
const pid = projects[0].project_id;
const doomed = projects[1].project_id;
const project = await projectsApi.get(pid);
check("projects.get", project.project_id === pid && project.name === projects[0].name, JSON.stringify(project));
const newName = `sdk smoke ${RUN}`;
const updated = await projectsApi.update(pid, { name: newName });
check("projects.update answers a message", Boolean(updated.message), JSON.stringify(updated));
check("projects.get shows the new name", (await projectsApi.get(pid)).name === newName);

// --- balances, models ---------------------------------------------------------------------------
const { balances } = await projectsApi.billing.balances.list(pid);
check(
  "balances.list",
  balances.length >= 1 && balances[0].balance_id && balances[0].amount > 0 && balances[0].units === "USD",
  JSON.stringify(balances),
);
const balance = await projectsApi.billing.balances.get(pid, balances[0].balance_id);
check("balances.get", balance.balance_id === balances[0].balance_id && balance.amount === balances[0].amount);

const models = await dg.manage.v1.models.list();
const stt = models.stt || [];
const tts = models.tts || [];
check(
  "models.list has STT and TTS models",
  stt.some((m) => m.canonical_name === "nova-3") && tts.some((m) => m.canonical_name === "aura-2-thalia-en"),
  `${stt.length} stt, ${tts.length} tts`,
);
const nova = stt.find((m) => m.canonical_name === "nova-3");
let got = await dg.manage.v1.models.get(nova.uuid);
check("models.get of an STT model", got.uuid === nova.uuid && got.canonical_name === "nova-3", JSON.stringify(got));
const thalia = tts.find((m) => m.canonical_name === "aura-2-thalia-en");
got = await dg.manage.v1.models.get(thalia.uuid);
check("models.get of a TTS model", got.uuid === thalia.uuid && got.canonical_name === "aura-2-thalia-en", JSON.stringify(got));
const scoped = await projectsApi.models.list(pid);
check("projects.models.list", (scoped.stt || []).length === stt.length && (scoped.tts || []).length === tts.length);

// --- members ------------------------------------------------------------------------------------
const { members } = await projectsApi.members.list(pid);
const owners = members.filter((m) => (m.scopes || []).includes("owner"));
const plain = members.filter((m) => JSON.stringify(m.scopes) === '["member"]');
check(
  "members.list",
  members.length >= 3 && owners.length === 1 && plain.length > 0 && members.every((m) => m.email),
  JSON.stringify(members),
);
const gone = plain[plain.length - 1];
const removed = await projectsApi.members.delete(pid, gone.member_id);
check("members.delete answers a message", Boolean(removed.message), JSON.stringify(removed));
const left = (await projectsApi.members.list(pid)).members;
check(
  "members.list no longer shows the removed member",
  left.length === members.length - 1 && left.every((m) => m.member_id !== gone.member_id),
);
apiError(
  "removing the last owner is refused (400)",
  await refused(() => projectsApi.members.delete(pid, owners[0].member_id)),
  400,
  { err_msg: (m) => String(m).includes("last owner") },
);
check(
  "the last owner is still a member",
  (await projectsApi.members.list(pid)).members.some((m) => m.member_id === owners[0].member_id),
);

// --- keys ---------------------------------------------------------------------------------------
const created = await projectsApi.keys.create(pid, {
  comment: `sdk smoke ${RUN}`,
  scopes: ["member"],
  tags: ["sdk-smoke"],
  time_to_live_in_seconds: 3600,
});
const secret = created.key;
check(
  "keys.create returns the secret once, with comment and scopes",
  secret && created.api_key_id && created.comment === `sdk smoke ${RUN}` && JSON.stringify(created.scopes) === '["member"]',
  JSON.stringify(created),
);
const ttl = (Date.parse(created.expiration_date) - Date.now()) / 1000;
check("keys.create: time_to_live_in_seconds sets the expiration date", ttl > 3500 && ttl <= 3660, created.expiration_date);
const until = new Date(Math.floor(Date.now() / 1000) * 1000 + 30 * 86_400_000);
const dated = await projectsApi.keys.create(pid, {
  comment: `dated ${RUN}`,
  scopes: ["admin"],
  expiration_date: until.toISOString().replace(/\.\d+Z$/, "Z"),
});
check(
  "keys.create with an expiration_date",
  dated.key && Date.parse(dated.expiration_date) === until.getTime() && JSON.stringify(dated.scopes) === '["admin"]',
  JSON.stringify(dated),
);
const listed = await projectsApi.keys.list(pid);
const items = listed.api_keys || [];
const mine = items.filter((i) => i.api_key.api_key_id === created.api_key_id);
check(
  "keys.list shows the new key",
  mine.length === 1 && mine[0].api_key.comment === `sdk smoke ${RUN}` && mine[0].member.member_id,
  JSON.stringify(mine),
);
const raw = JSON.stringify(listed);
check(
  "keys.list never shows a secret",
  !raw.includes(secret) && !raw.includes(dated.key) && items.every((i) => !("key" in i.api_key)),
  raw.slice(0, 400),
);
const one = JSON.stringify(await projectsApi.keys.get(pid, created.api_key_id));
check("keys.get shows the key without its secret", !one.includes(secret) && one.includes(created.api_key_id), one);

const memberClient = client(secret);
const seen = (await memberClient.manage.v1.projects.list()).projects;
check(
  "the new key authenticates a client of its own (it sees its project only)",
  seen.length === 1 && seen[0].project_id === pid,
  JSON.stringify(seen),
);
check("the member key reads its project", (await memberClient.manage.v1.projects.get(pid)).name === newName);
apiError(
  "a member key may not delete the project (401 INSUFFICIENT_PERMISSIONS)",
  await refused(() => memberClient.manage.v1.projects.delete(pid)),
  401,
  { err_code: "INSUFFICIENT_PERMISSIONS" },
);
apiError(
  "a member key may not list the members (401 INSUFFICIENT_PERMISSIONS)",
  await refused(() => memberClient.manage.v1.projects.members.list(pid)),
  401,
  { err_code: "INSUFFICIENT_PERMISSIONS" },
);
apiError("a key cannot reach another project (404)", await refused(() => memberClient.manage.v1.projects.get(doomed)), 404, {
  category: "NOT_FOUND",
});
const deleted = await projectsApi.keys.delete(pid, created.api_key_id);
check("keys.delete answers a message", Boolean(deleted.message), JSON.stringify(deleted));
apiError("the deleted key is refused at once (401)", await refused(() => memberClient.manage.v1.projects.list()), 401, {
  err_code: "INVALID_AUTH",
});
await projectsApi.keys.delete(pid, dated.api_key_id);
check(
  "keys.list no longer shows the deleted keys",
  (await projectsApi.keys.list(pid)).api_keys.every(
    (i) => i.api_key.api_key_id !== created.api_key_id && i.api_key.api_key_id !== dated.api_key_id,
  ),
);

// --- listen -------------------------------------------------------------------------------------
const audio = wavBytes(1.5, 16000, 2);
const tag = `sdk-smoke-${RUN}`;
let res = await dg.listen.v1.media.transcribeFile(audio, { model: "nova-3", tag });
let meta = res.metadata;
check(
  "transcribeFile: duration and channels from the WAV",
  Math.abs(meta.duration - 1.5) < 0.01 && meta.channels === 2 && meta.request_id && meta.models?.length && meta.model_info,
  JSON.stringify(meta),
);
check("transcribeFile: sample_rate from the WAV (the simulator's extra metadata.sample_rate)", meta.sample_rate === 16000, JSON.stringify(meta));
let alt = res.results.channels[0].alternatives[0];
check(
  "transcribeFile: a transcript with timed words inside the audio",
  alt.words.length > 0 && typeof alt.transcript === "string" && alt.words.every((w) => w.start >= 0 && w.start <= w.end && w.end <= 1.5 + 1e-6),
  JSON.stringify(alt).slice(0, 600),
);
check(
  "transcribeFile without options: no speakers, paragraphs, utterances or sentiments",
  alt.paragraphs === undefined &&
    res.results.utterances === undefined &&
    res.results.sentiments === undefined &&
    alt.words.every((w) => w.speaker === undefined && w.punctuated_word === undefined),
);
check("transcribeFile: the tag is echoed", JSON.stringify(meta.tags) === JSON.stringify([tag]), JSON.stringify(meta.tags));

res = await dg.listen.v1.media.transcribeFile(audio, {
  model: "nova-3",
  diarize: true,
  punctuate: true,
  utterances: true,
  paragraphs: true,
  sentiment: true,
});
alt = res.results.channels[0].alternatives[0];
check("diarize: every word has a speaker", alt.words.every((w) => Number.isInteger(w.speaker)), JSON.stringify(alt.words.slice(0, 2)));
check("punctuate: punctuated words", alt.words.every((w) => w.punctuated_word) && /^[A-Z]/.test(alt.transcript), alt.transcript);
check(
  "utterances: results.utterances",
  res.results.utterances?.length > 0 && res.results.utterances.every((u) => u.transcript && u.words.length && u.start <= u.end),
  JSON.stringify(res.results.utterances).slice(0, 400),
);
check(
  "paragraphs: alternatives[0].paragraphs",
  alt.paragraphs?.paragraphs?.length > 0 && alt.paragraphs.transcript.trim(),
  JSON.stringify(alt.paragraphs).slice(0, 400),
);
check(
  "sentiment: results.sentiments with an average",
  ["positive", "neutral", "negative"].includes(res.results.sentiments?.average?.sentiment),
  JSON.stringify(res.results.sentiments).slice(0, 400),
);

let e = await refused(() => dg.listen.v1.media.transcribeFile(Buffer.from("this is not audio at all".repeat(10)), {}));
check("undecodable bytes: the SDK's BadRequestError", e instanceof BadRequestError, String(e).slice(0, 400));
apiError("undecodable bytes: Deepgram's 400 body", e, 400, {
  err_msg: (m) => String(m).startsWith("failed to process audio"),
});

const served = wavBytes(2.25, 8000, 1);
const server = http.createServer((req, res2) => {
  res2.writeHead(200, { "Content-Type": "audio/wav", "Content-Length": served.length });
  res2.end(served);
});
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
try {
  res = await dg.listen.v1.media.transcribeUrl({
    url: `http://127.0.0.1:${server.address().port}/call.wav`,
    model: "nova-3",
    punctuate: true,
  });
  check(
    "transcribeUrl of a loopback URL: the served file's duration and channels",
    Math.abs(res.metadata.duration - 2.25) < 0.01 && res.metadata.channels === 1 && res.metadata.sample_rate === 8000,
    JSON.stringify(res.metadata),
  );
} finally {
  server.close();
}
e = await refused(() => dg.listen.v1.media.transcribeUrl({ url: "https://audio.invalid/call.wav" }));
apiError("transcribeUrl of a non-loopback URL: 400 REMOTE_CONTENT_ERROR", e, 400, { err_code: "REMOTE_CONTENT_ERROR" });

// --- speak --------------------------------------------------------------------------------------
const TEXT = "Hello from the opsdeck sandbox.";
async function speak(options, text = TEXT) {
  const answer = await dg.speak.v1.audio.generate({ text, model: "aura-2-thalia-en", tag, ...options });
  return Buffer.from(await answer.arrayBuffer());
}

const wav = await speak({ encoding: "linear16", container: "wav", sample_rate: 8000 });
const wavInfo = {
  channels: wav.readUInt16LE(22),
  rate: wav.readUInt32LE(24),
  bits: wav.readUInt16LE(34),
};
const dataAt = wav.indexOf("data", 12);
const frames = dataAt > 0 ? wav.readUInt32LE(dataAt + 4) / 2 : 0;
check(
  "speak linear16/wav: a RIFF WAV, mono 16-bit at 8000 Hz",
  wav.toString("latin1", 0, 4) === "RIFF" && wav.toString("latin1", 8, 12) === "WAVE" &&
    wavInfo.channels === 1 && wavInfo.rate === 8000 && wavInfo.bits === 16 && frames > 8000,
  JSON.stringify({ ...wavInfo, frames }),
);
const mulaw = await speak({ encoding: "mulaw", container: "none" });
const alaw = await speak({ encoding: "alaw", container: "none", sample_rate: 8000 });
check(
  "speak mulaw and alaw without a container: one byte a sample, same length",
  mulaw.length === frames && alaw.length === frames && mulaw.toString("latin1", 0, 4) !== "RIFF",
  `${mulaw.length} ${alaw.length} ${frames}`,
);
const { data: streamed, rawResponse } = await dg.speak.v1.audio
  .generate({ text: TEXT, model: "aura-2-thalia-en", encoding: "mulaw", container: "none", tag })
  .withRawResponse();
const streamedBytes = Buffer.from(await streamed.arrayBuffer());
check(
  "speak through withRawResponse: Content-Type and the dg-* headers",
  rawResponse.headers.get("content-type") === "audio/mulaw;rate=8000" &&
    rawResponse.headers.get("dg-char-count") === String(TEXT.length) &&
    rawResponse.headers.get("dg-model-name") === "aura-2-thalia-en" &&
    Boolean(rawResponse.headers.get("dg-request-id")) &&
    streamedBytes.length === mulaw.length,
  JSON.stringify([...rawResponse.headers.entries()]),
);
const longer = await speak({ encoding: "mulaw", container: "none" }, `${TEXT} ${TEXT}`);
const ratio = (longer.length - 0.67 * 8000) / (mulaw.length - 0.67 * 8000);
check("speak: audio length in proportion to the text", ratio > 1.9 && ratio < 2.1, `${mulaw.length} -> ${longer.length}`);

res = await dg.listen.v1.media.transcribeFile(wav, { model: "nova-3" });
check(
  "speak -> transcribe (linear16/wav) gives back the text",
  JSON.stringify(wordsOf(res.results.channels[0].alternatives[0].transcript)) === JSON.stringify(wordsOf(TEXT)),
  res.results.channels[0].alternatives[0].transcript,
);
// The SDK's transcribeFile has no sample_rate option; raw audio needs one, so it goes as an
// extra query parameter.
res = await dg.listen.v1.media.transcribeFile(alaw, { model: "nova-3", encoding: "alaw" }, { queryParams: { sample_rate: 8000 } });
check(
  "speak -> transcribe (raw alaw, encoding and sample_rate given) gives back the text",
  JSON.stringify(wordsOf(res.results.channels[0].alternatives[0].transcript)) === JSON.stringify(wordsOf(TEXT)),
  res.results.channels[0].alternatives[0].transcript,
);
e = await refused(() => speak({ encoding: "linear16", sample_rate: 44100 }));
check("speak of an unsupported format: the SDK's BadRequestError", e instanceof BadRequestError, String(e).slice(0, 400));
apiError("speak of an unsupported format: 400 INVALID_QUERY_PARAMETER", e, 400, {
  err_code: "INVALID_QUERY_PARAMETER",
  err_msg: (m) => String(m).startsWith("Unsupported audio format"),
});

// --- read ---------------------------------------------------------------------------------------
const PARAGRAPH =
  "Hi, thank you for calling the support line. My order arrived late and the box was damaged, which " +
  "was really frustrating. I would like to get a replacement or a refund for the broken speaker. " +
  "The agent was very helpful and promised to send a new one right away. Great service, thanks!";
const read = await dg.read.v1.text.analyze({
  body: { text: PARAGRAPH },
  sentiment: true,
  topics: true,
  intents: true,
  summarize: true,
  language: "en",
});
const results = read.results || {};
check(
  "read: sentiments with segments and an average",
  results.sentiments?.segments?.length > 0 && ["positive", "neutral", "negative"].includes(results.sentiments.average?.sentiment),
  JSON.stringify(results).slice(0, 600),
);
check(
  "read: topics",
  results.topics?.segments?.length > 0 && results.topics.segments.every((s) => s.topics?.length),
  JSON.stringify(results.topics),
);
check("read: intents", Array.isArray(results.intents?.segments), JSON.stringify(results.intents));
check(
  "read: a summary",
  Boolean(results.summary?.text || results.summary?.results?.summary?.text),
  JSON.stringify(results.summary),
);
const rmeta = read.metadata || {};
check(
  "read: metadata names the request and the models used",
  Boolean(rmeta.request_id || rmeta.metadata?.request_id) && JSON.stringify(rmeta).includes("sentiment_info"),
  JSON.stringify(rmeta),
);
e = await refused(() => dg.read.v1.text.analyze({ body: { text: "Bonjour, merci." }, sentiment: true, language: "fr" }));
apiError("read in French is refused: 400 INVALID_QUERY_PARAMETER", e, 400, { err_code: "INVALID_QUERY_PARAMETER" });

// --- usage --------------------------------------------------------------------------------------
const usage = (filters) => projectsApi.usage.get(pid, filters);
// The tagged requests of this run, whatever day it is in UTC when they were made.
const around = { start: daysAgo(1), end: daysAgo(-1) };
const past = { start: daysAgo(7), end: daysAgo(1) };
let answer = await usage({ ...around, tag, endpoint: "listen" });
check(
  "usage.get with a tag filter: the tagged transcription of this run",
  answer.results?.length === 1 && answer.results[0].requests === 1 && Math.abs(answer.results[0].hours * 3600 - 1.5) < 1,
  JSON.stringify(answer),
);
const week = await usage(past);
const days = week.results || [];
check(
  "usage.get over a past week: one result a day",
  days.length === 7 && week.start === past.start && week.end === past.end && days.every((r) => r.requests > 0),
  JSON.stringify(week).slice(0, 600),
);
answer = await usage({ ...past, endpoint: "listen", diarize: true });
const sum = (rows) => rows.reduce((n, r) => n + r.requests, 0);
check(
  "usage.get with endpoint and feature filters counts fewer requests",
  sum(answer.results || []) > 0 && sum(answer.results || []) < sum(days),
  JSON.stringify(answer).slice(0, 600),
);
answer = await usage({ ...around, tag, endpoint: "speak" });
const ttsSum = (field) => (answer.results || []).reduce((n, r) => n + r.tts[field], 0);
check(
  "usage.get endpoint=speak: this run's five tagged speak requests and their characters",
  ttsSum("requests") === 5 && ttsSum("characters") === 6 * TEXT.length + 1,
  JSON.stringify(answer),
);

// --- project deletion (last: it takes the project's keys with it) -------------------------------
const dropped = await projectsApi.delete(doomed);
check("projects.delete answers a message", Boolean(dropped.message), JSON.stringify(dropped));
apiError("projects.get of the deleted project: 404 with Deepgram's body", await refused(() => projectsApi.get(doomed)), 404, {
  category: "NOT_FOUND",
  message: (m) => String(m).includes("cannot be found"),
});
check("projects.list no longer shows it", (await projectsApi.list()).projects.every((p) => p.project_id !== doomed));

console.log(`deepgram node: ${checks} checks passed`);
