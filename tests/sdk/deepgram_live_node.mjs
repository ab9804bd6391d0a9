// Smoke test: the official Deepgram Node SDK's live client (npm `@deepgram/sdk` 5.x,
// `client.listen.v1.connect`) against `opsdeck sandbox`'s `/v1/listen` WebSocket.
//
// Usage: DEEPGRAM_JS_DIR=<dir with node_modules/@deepgram/sdk> node deepgram_live_node.mjs [BASE_URL [CONTROL_URL]]
//        (default $OPSDECK_DEEPGRAM_URL, else http://127.0.0.1:7706; the control URL, when given, is
//        used once to reset the Deepgram simulator to its seeded state before the checks)
// The client's `environment` points its REST base and its `production` WebSocket base (the ws://
// form of the same URL) at the sandbox, so no request leaves loopback. Each stream is the SDK's
// socket (`connect()`, `waitForOpen()`, `on("message"|"close"|"error")`), ended with
// `sendCloseStream`; every wait is bounded.
// - Speech the simulator made (`speak`, linear16 at 16 kHz in a WAV, about 6 s), streamed in 0.1 s
//   frames at real time with interim_results and punctuate: interim results come before the
//   finals of their stretch of audio and each is a prefix of the words that follow; the finals'
//   transcripts joined are the spoken text (its words, and the punctuated text itself); the finals
//   tile the audio; a `Metadata` message comes last, with the audio's duration, one channel and
//   the stream's request id; the socket closes with 1000.
// - `sendFinalize` mid-stream: a final result with `from_finalize` that ends where the audio sent
//   ends, or where the word it was in the middle of began.
// - Raw `mulaw` at 8 kHz without a container, streamed with encoding and sample_rate: the text.
// - A 440 Hz tone built here (2 s, then 1 s of silence) with vad_events: `SpeechStarted` at the
//   tone's start, synthetic words (confidence 0.62, `metadata.warnings[0].type === "simulated"`)
//   inside the tone, and an endpoint (`speech_final`) after it.
// - A wrong key is refused at the handshake with HTTP 401 (the socket's error event).
// - `sendKeepAlive` gets no reply and the socket stays open and usable.
// Prints one line per check and exits 1 at the first failure.
import { createRequire } from "node:module";
import path from "node:path";

const require = createRequire(path.join(process.env.DEEPGRAM_JS_DIR || process.cwd(), "package.json"));
const { DeepgramClient } = require("@deepgram/sdk");

const baseUrl = (process.argv[2] || process.env.OPSDECK_DEEPGRAM_URL || "http://127.0.0.1:7706").replace(/\/+$/, "");
const control = (process.argv[3] || "").replace(/\/+$/, "");
const KEY = process.env.DEEPGRAM_SANDBOX_KEY || "sandbox-deepgram-key";
const MODEL = "nova-3";
// How long a socket may take to open, and to send its last messages and close after CloseStream.
const OPEN_WAIT_MS = 10_000;
const CLOSE_WAIT_MS = 15_000;
const OPEN = 1; // WebSocket readyState
let checks = 0;

function check(name, condition, detail = "") {
  if (!condition) {
    console.error(`FAIL deepgram live node: ${name} ${detail}`.slice(0, 2000));
    process.exit(1);
  }
  checks += 1;
  console.log(`ok deepgram live node: ${name}`);
}

function client(apiKey = KEY) {
  const ws = baseUrl.replace(/^http/, "ws");
  return new DeepgramClient({
    apiKey,
    environment: { base: baseUrl, production: ws, agent: ws, agentRest: baseUrl },
    timeoutInSeconds: 30,
  });
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// `promise`, or a rejection naming `what` after `ms`.
function bounded(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: nothing within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

const wordsOf = (text) =>
  text
    .split(/\s+/)
    .map((w) => w.toLowerCase().replace(/[^a-z0-9']/g, ""))
    .filter(Boolean);
const near = (a, b, eps = 0.011) => typeof a === "number" && typeof b === "number" && Math.abs(a - b) <= eps;

// Where a WAV's samples start (after its `data` chunk's header).
function dataOffset(wav) {
  const at = wav.indexOf("data", 12);
  return at > 0 ? at + 8 : 44;
}

// A 440 Hz tone, then silence: a mono 16-bit PCM WAV built by hand.
function toneWav(seconds, silence, rate = 16000) {
  const sound = Math.round(seconds * rate);
  const frames = sound + Math.round(silence * rate);
  const data = Buffer.alloc(frames * 2);
  for (let i = 0; i < sound; i++) data.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / rate)), i * 2);
  const h = Buffer.alloc(44);
  h.write("RIFF", 0);
  h.writeUInt32LE(36 + data.length, 4);
  h.write("WAVE", 8);
  h.write("fmt ", 12);
  h.writeUInt32LE(16, 16);
  h.writeUInt16LE(1, 20);
  h.writeUInt16LE(1, 22);
  h.writeUInt32LE(rate, 24);
  h.writeUInt32LE(rate * 2, 28);
  h.writeUInt16LE(2, 32);
  h.writeUInt16LE(16, 34);
  h.write("data", 36);
  h.writeUInt32LE(data.length, 40);
  return Buffer.concat([h, data]);
}

// One live stream: its messages in order, the errors the socket emitted and its first close code.
class Stream {
  constructor(label, options = {}) {
    this.label = label;
    this.options = options;
    this.messages = [];
    this.errors = [];
    this.closeCode = undefined;
  }

  // Sends `audio` in `frame`-byte frames `pace` ms apart, then CloseStream, and waits for the
  // close. `after` maps a frame's index to a call made with the socket once it is sent; `before`
  // is awaited with the socket before any audio.
  async run(audio, frame, pace, { after = {}, before } = {}) {
    const socket = await dg.listen.v1.connect({ model: MODEL, ...this.options });
    let closed;
    const done = new Promise((resolve) => {
      closed = resolve;
    });
    socket.on("message", (m) => this.messages.push(m));
    socket.on("error", (e) => this.errors.push(e));
    socket.on("close", (e) => {
      if (this.closeCode === undefined) this.closeCode = e?.code;
      closed();
    });
    socket.connect();
    try {
      await bounded(socket.waitForOpen(), OPEN_WAIT_MS, "waitForOpen");
    } catch (e) {
      check(`${this.label}: the socket opens`, false, String(e?.message || e));
    }
    if (before) await before(socket);
    for (let n = 0, at = 0; at < audio.length; n++, at += frame) {
      socket.sendMedia(audio.subarray(at, at + frame));
      if (after[n]) after[n](socket);
      await sleep(pace);
    }
    socket.sendCloseStream({ type: "CloseStream" });
    let ended = true;
    await bounded(done, CLOSE_WAIT_MS, "close").catch(() => {
      ended = false;
    });
    socket.close(); // a no-op for the wire once the server has closed; stops any reconnection
    check(
      `${this.label}: the socket closed within ${CLOSE_WAIT_MS / 1000}s of CloseStream`,
      ended,
      JSON.stringify(this.messages.map((m) => m.type)),
    );
    return this;
  }

  results() {
    return this.messages.filter((m) => m.type === "Results");
  }

  finals() {
    return this.results().filter((r) => r.is_final);
  }

  transcript() {
    return this.finals()
      .map((r) => r.channel.alternatives[0].transcript)
      .filter(Boolean)
      .join(" ");
  }

  // The common end of a stream: known message types only, finals tiling the audio, Metadata last
  // with the audio's duration, a 1000 close, no error.
  endedCleanly(seconds) {
    check(
      `${this.label}: every message is Results, Metadata or SpeechStarted, and no error`,
      this.messages.every((m) => ["Results", "Metadata", "SpeechStarted"].includes(m?.type)) && this.errors.length === 0,
      JSON.stringify(this.messages.map((m) => m?.type)) + ` errors=${this.errors.map(String)}`,
    );
    const finals = this.finals();
    const tiled =
      finals.length > 0 &&
      near(finals[0].start, 0) &&
      finals.slice(1).every((f, i) => near(f.start, finals[i].start + finals[i].duration));
    const last = finals[finals.length - 1];
    check(
      `${this.label}: the finals tile the audio (each starts where the last ended, the last ends at ${seconds.toFixed(2)}s)`,
      tiled && near(last.start + last.duration, seconds),
      JSON.stringify(finals.map((f) => [f.start, f.duration])),
    );
    const meta = this.messages[this.messages.length - 1];
    const requestIds = [...new Set(this.results().map((r) => r.metadata.request_id))];
    check(
      `${this.label}: Metadata comes last, with the audio's duration, 1 channel and the stream's request id`,
      meta?.type === "Metadata" &&
        near(meta.duration, seconds) &&
        meta.channels === 1 &&
        meta.transaction_key === "deprecated" &&
        Boolean(meta.sha256) &&
        requestIds.length === 1 &&
        requestIds[0] === meta.request_id,
      `${JSON.stringify(meta)} request ids ${requestIds}`,
    );
    check(`${this.label}: the socket closed with 1000`, this.closeCode === 1000, String(this.closeCode));
  }
}

if (control) {
  const r = await fetch(`${control}/reset?service=deepgram`, { method: "POST", signal: AbortSignal.timeout(10_000) });
  check("the control port reset the Deepgram simulator", r.ok && (await r.text()).includes("deepgram"));
}

const dg = client();

async function speak(text, options) {
  const answer = await dg.speak.v1.audio.generate({ text, model: "aura-2-thalia-en", ...options });
  return Buffer.from(await answer.arrayBuffer());
}

// --- 1. speech at real time, interim results, punctuation ---------------------------------------
const TEXT = "Hello from the opsdeck sandbox. The live stream reads it back.";
const wav = await speak(TEXT, { encoding: "linear16", container: "wav", sample_rate: 16000 });
const seconds = (wav.length - dataOffset(wav)) / 32000;
check(
  "speak linear16 at 16 kHz: a mono 16-bit WAV of a few seconds",
  wav.toString("latin1", 0, 4) === "RIFF" &&
    wav.readUInt16LE(22) === 1 &&
    wav.readUInt32LE(24) === 16000 &&
    wav.readUInt16LE(34) === 16 &&
    seconds > 4 &&
    seconds < 8,
  `${seconds}s`,
);

// 0.1 s of 16-bit 16 kHz mono is 3200 bytes, sent every 100 ms: real time.
const live = await new Stream("speech at real time", { interim_results: "true", punctuate: "true" }).run(wav, 3200, 100);
const results = live.results();
const interims = results.filter((r) => !r.is_final);
check(
  "interim results (is_final false) with words arrive, the first before any final",
  interims.filter((r) => r.channel.alternatives[0].words.length).length >= 2 && results.length > 0 && !results[0].is_final,
  JSON.stringify(results.map((r) => [r.is_final, r.start, r.duration])),
);
const late = interims.filter(
  (r) => !live.messages.slice(live.messages.indexOf(r) + 1).some((f) => f.is_final && near(f.start, r.start)),
);
check("each interim arrives before the final of its stretch of audio", late.length === 0, JSON.stringify(late).slice(0, 600));
const heard = (rs) => rs.flatMap((r) => r.channel.alternatives[0].words.map((w) => `${w.word}@${w.start}-${w.end}`));
const wrong = interims
  .map((r) => ({ said: heard([r]), eventual: heard(live.finals().filter((f) => f.start >= r.start - 0.001)) }))
  .filter(({ said, eventual }) => JSON.stringify(eventual.slice(0, said.length)) !== JSON.stringify(said));
check("each interim's words are a prefix of the words the finals then give", wrong.length === 0, JSON.stringify(wrong.slice(0, 2)));
const transcript = live.transcript();
check("the finals' transcripts joined have the spoken words", JSON.stringify(wordsOf(transcript)) === JSON.stringify(wordsOf(TEXT)), transcript);
check("the finals' transcripts joined are the punctuated text", transcript === TEXT, transcript);
check(
  "every final word lies inside its result and has its punctuated form",
  live.finals().every((f) =>
    f.channel.alternatives[0].words.every(
      (w) =>
        f.start - 0.001 <= w.start &&
        w.start <= w.end &&
        w.end <= f.start + f.duration + 0.001 &&
        w.punctuated_word &&
        JSON.stringify(wordsOf(w.punctuated_word)) === JSON.stringify([w.word]),
    ),
  ),
  JSON.stringify(live.finals()).slice(0, 800),
);
check(
  "Results name the model and channel 0 of 1",
  results.every(
    (r) => JSON.stringify(r.channel_index) === "[0,1]" && r.metadata?.model_info?.name === MODEL && r.metadata.model_uuid,
  ),
  JSON.stringify(results[0]).slice(0, 600),
);
live.endedCleanly(seconds);

// --- 2. Finalize mid-stream ---------------------------------------------------------------------
const SHORT = "Hello from the opsdeck sandbox.";
const shortWav = await speak(SHORT, { encoding: "linear16", container: "wav", sample_rate: 16000 });
const shortSeconds = (shortWav.length - dataOffset(shortWav)) / 32000;
const FINALIZE_AFTER = 12; // frames 0..12: 1.3 s of bytes, less the WAV header
const finalized = await new Stream("Finalize").run(shortWav, 3200, 20, {
  after: { [FINALIZE_AFTER]: (s) => s.sendFinalize({ type: "Finalize" }) },
});
const flushed = finalized.results().filter((r) => r.from_finalize);
const sent = ((FINALIZE_AFTER + 1) * 3200 - dataOffset(shortWav)) / 32000;
// It covers the audio sent, up to the word being heard when one is (a word is never cut in two:
// it goes whole into the next result), and its words lie within it.
const flushEnd = flushed.length ? flushed[0].start + flushed[0].duration : -1;
check(
  "Finalize mid-stream: one final result with from_finalize, ending where the audio sent ended or its word began",
  flushed.length === 1 &&
    flushed[0].is_final &&
    flushEnd > sent - 0.8 &&
    flushEnd <= sent + 0.002 &&
    flushed[0].channel.alternatives[0].words.every((w) => w.end <= flushEnd + 0.002),
  JSON.stringify(finalized.results().map((r) => [r.start, r.duration, r.is_final, r.from_finalize])) + ` sent ${sent}s`,
);
check(
  "Finalize: the stream still reads the whole text",
  JSON.stringify(wordsOf(finalized.transcript())) === JSON.stringify(wordsOf(SHORT)),
  finalized.transcript(),
);
finalized.endedCleanly(shortSeconds);

// --- 3. raw mulaw at 8 kHz ----------------------------------------------------------------------
const mulaw = await speak(SHORT, { encoding: "mulaw", container: "none" });
check(
  "speak mulaw without a container: raw bytes, not a WAV",
  mulaw.toString("latin1", 0, 4) !== "RIFF" && mulaw.length > 8000,
  String(mulaw.length),
);
// 0.1 s of 8 kHz mulaw is 800 bytes; sent at five times real time.
const raw = await new Stream("raw mulaw", { encoding: "mulaw", sample_rate: 8000 }).run(mulaw, 800, 20);
check(
  "raw mulaw at 8 kHz, streamed with encoding and sample_rate, reads back the text",
  JSON.stringify(wordsOf(raw.transcript())) === JSON.stringify(wordsOf(SHORT)),
  raw.transcript(),
);
raw.endedCleanly(mulaw.length / 8000);

// --- 4. audio the simulator did not make, with vad_events ---------------------------------------
const vad = await new Stream("tone with vad_events", { vad_events: "true" }).run(toneWav(2, 1), 3200, 20);
const started = vad.messages.filter((m) => m.type === "SpeechStarted");
const worded = vad.results().filter((r) => r.channel.alternatives[0].words.length);
check(
  "vad_events: SpeechStarted at the tone's start, before any words",
  started.length === 1 &&
    near(started[0].timestamp, 0, 0.05) &&
    JSON.stringify(started[0].channel) === "[0,1]" &&
    worded.length > 0 &&
    vad.messages.indexOf(started[0]) < vad.messages.indexOf(worded[0]),
  JSON.stringify(started) + JSON.stringify(vad.messages.map((m) => m.type)),
);
const words = worded.flatMap((r) => r.channel.alternatives[0].words);
check(
  "a tone gets synthetic words inside it, confidence 0.62",
  words.every((w) => w.confidence === 0.62 && w.start >= 0 && w.start < w.end && w.end <= 2 + 0.011) &&
    worded.every((r) => r.channel.alternatives[0].confidence === 0.62),
  JSON.stringify(words).slice(0, 600),
);
const warnings = worded.map((r) => r.metadata?.warnings?.[0]);
check(
  'synthetic words: Results\' metadata.warnings[0].type is "simulated"',
  warnings.every((w) => w?.type === "simulated"),
  JSON.stringify(warnings).slice(0, 600),
);
check(
  "the silence after the tone is an endpoint: a final with speech_final ending after the tone",
  vad.finals().some((f) => f.speech_final && f.start + f.duration >= 2 && f.start + f.duration <= 2.5),
  JSON.stringify(vad.finals().map((f) => [f.start, f.duration, f.speech_final])),
);
vad.endedCleanly(3);

// --- 5. a wrong key -----------------------------------------------------------------------------
{
  const socket = await client("not-a-key").listen.v1.connect({ model: MODEL });
  const errors = [];
  socket.on("error", (e) => errors.push(e));
  socket.connect();
  let refusal;
  try {
    await bounded(socket.waitForOpen(), OPEN_WAIT_MS, "waitForOpen");
    refusal = "WRONG: the socket opened";
  } catch (e) {
    refusal = String(e?.message || e);
  }
  socket.close(); // stops the SDK's reconnecting socket from trying again
  check(
    "a wrong key is refused at the handshake with 401 (waitForOpen rejects, the error event says 401)",
    /\b401\b/.test(refusal) && errors.length >= 1 && errors.every((e) => /\b401\b/.test(String(e?.message))),
    `${refusal} errors=${errors.map(String)}`,
  );
}

// --- 6. KeepAlive -------------------------------------------------------------------------------
const kept = new Stream("KeepAlive");
let quiet;
let stillOpen;
await kept.run(shortWav, 3200, 20, {
  // A KeepAlive before any audio, then a second of waiting: nothing should come back.
  before: async (socket) => {
    socket.sendKeepAlive({ type: "KeepAlive" });
    await sleep(1000);
    quiet = [...kept.messages];
    stillOpen = socket.readyState === OPEN;
  },
  after: { 5: (s) => s.sendKeepAlive({ type: "KeepAlive" }) },
});
check("KeepAlive before any audio: no reply within 1 s, the socket still open", quiet.length === 0 && stillOpen, JSON.stringify(quiet));
check(
  "KeepAlive: the socket stays usable (the stream after it reads back the text)",
  JSON.stringify(wordsOf(kept.transcript())) === JSON.stringify(wordsOf(SHORT)),
  kept.transcript(),
);
kept.endedCleanly(shortSeconds);

console.log(`deepgram live node: ${checks} checks passed`);
