// The fake LLM's Responses and Gemini streams read by the official SDKs (npm `openai`,
// `@google/genai`): each scenario of tests/support/provider_streams.h, which the e2e tests run
// Rebound against, must parse in the SDK and accumulate the text, thinking, calls and end the
// scenario says, or fail where it says it fails. So the fakes cannot drift from the formats the
// real services send. fake_llm_scenarios serves them on 127.0.0.1 ($REBOUND_FAKE_SCENARIOS).

import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import OpenAI from "openai";
import { GoogleGenAI } from "@google/genai";

const helper = process.env.REBOUND_FAKE_SCENARIOS;

// Starts the helper for one API; resolves to {port, scenarios, stop}.
async function serve(api) {
  assert.ok(helper, "REBOUND_FAKE_SCENARIOS names the fake_llm_scenarios binary");
  const child = spawn(helper, [api], { stdio: ["pipe", "pipe", "inherit"] });
  const lines = createInterface({ input: child.stdout });
  const first = await new Promise((resolve, reject) => {
    lines.once("line", resolve);
    child.once("exit", (code) => reject(new Error(`fake_llm_scenarios exited ${code}`)));
  });
  const { port, scenarios } = JSON.parse(first);
  assert.ok(scenarios.length >= 8, "every scenario listed");
  const stop = () => {
    child.stdin.end();
    return new Promise((resolve) => child.once("exit", resolve));
  };
  return { port, scenarios, stop };
}

// Checks what a reader got against the scenario's expectation.
function check(name, expect, got) {
  const where = `scenario ${name}: ${JSON.stringify(got)}`;
  if ("error" in expect) {
    assert.ok(got.error !== null, `${where}: the SDK reports a failure`);
    assert.ok(got.error.includes(expect.error), `${where}: the failure says "${expect.error}"`);
    if (expect.status) assert.equal(got.status, expect.status, `${where}: status`);
    assert.equal(got.text, expect.text, `${where}: text streamed before the failure`);
    return;
  }
  assert.equal(got.error, null, `${where}: no failure`);
  assert.equal(got.text, expect.text, `${where}: text`);
  assert.equal(got.thinking, expect.thinking, `${where}: thinking`);
  assert.deepEqual(got.calls, expect.calls, `${where}: calls`);
  assert.equal(got.end, expect.end, `${where}: end`);
  if ("blocked" in expect) assert.equal(got.blocked, expect.blocked, `${where}: blockReason`);
}

// One Responses request through the SDK's stream helper, which accumulates the response from
// the events (and refuses events that do not fit the snapshot: a missing response.created, an
// output_index or content_index with no item or part).
async function readResponses(client) {
  const got = { text: "", thinking: "", calls: [], end: "", error: null, status: 0 };
  let streamed = "";
  try {
    const stream = client.responses.stream({ model: "m1", input: "go" });
    for await (const event of stream) {
      if (event.type === "response.output_text.delta") streamed += event.delta;
      if (event.type === "error") {
        got.error = event.message;
        got.status = 0;
      }
    }
    const final = await stream.finalResponse();
    got.end = final.status;
    got.text = final.output_text;
    assert.equal(got.text, streamed, "the snapshot's output_text is the deltas' sum");
    for (const item of final.output) {
      if (item.type === "reasoning")
        got.thinking = item.summary.map((s) => s.text).join("\n\n");
      if (item.type === "function_call")
        got.calls.push({ name: item.name, arguments: JSON.parse(item.arguments) });
    }
  } catch (e) {
    got.error = String(e.message ?? e);
    got.status = e.status ?? 0;
    got.text = streamed;
  }
  return got;
}

// One Gemini request through generateContentStream; the chunks' parts accumulated as a reader
// of the stream does.
async function readGemini(ai) {
  const got = { text: "", thinking: "", calls: [], end: "", error: null, status: 0, blocked: "" };
  try {
    const stream = await ai.models.generateContentStream({ model: "m1", contents: "go" });
    for await (const chunk of stream) {
      if (chunk.promptFeedback?.blockReason) got.blocked = chunk.promptFeedback.blockReason;
      const candidate = chunk.candidates?.[0];
      for (const part of candidate?.content?.parts ?? []) {
        if (typeof part.text === "string") {
          if (part.thought) got.thinking += part.text;
          else got.text += part.text;
        }
        if (part.functionCall)
          got.calls.push({ name: part.functionCall.name, arguments: part.functionCall.args ?? {} });
      }
      if (candidate?.finishReason) got.end = candidate.finishReason;
    }
  } catch (e) {
    got.error = String(e.message ?? e);
    got.status = e.status ?? 0;
  }
  return got;
}

test("openai SDK: every Responses scenario of the fake", async () => {
  const { port, scenarios, stop } = await serve("responses");
  try {
    const client = new OpenAI({
      apiKey: "sk-test",
      baseURL: `http://127.0.0.1:${port}/v1`,
      maxRetries: 0,
    });
    for (const { name, expect } of scenarios) check(name, expect, await readResponses(client));
  } finally {
    await stop();
  }
});

test("@google/genai SDK: every Gemini scenario of the fake", async () => {
  const { port, scenarios, stop } = await serve("gemini");
  try {
    const ai = new GoogleGenAI({
      apiKey: "test-key",
      httpOptions: { baseUrl: `http://127.0.0.1:${port}`, apiVersion: "v1beta" },
    });
    for (const { name, expect } of scenarios) check(name, expect, await readGemini(ai));
  } finally {
    await stop();
  }
});
