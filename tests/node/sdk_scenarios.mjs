// The TypeScript Agent SDK (@anthropic-ai/claude-agent-sdk) driving the CLI named by argv[2]
// (pathToClaudeCodeExecutable) through scenario argv[3], against the loopback Messages server in
// ANTHROPIC_BASE_URL. Prints one JSON line: what the SDK's side saw. tests/sdkproto/test_sdk_typescript.py runs it.
import { createSdkMcpServer, query, tool } from "@anthropic-ai/claude-agent-sdk";
import { z } from "zod";

const [cli, scenario, cwd] = process.argv.slice(2);
const base = {
  pathToClaudeCodeExecutable: cli,
  cwd,
  model: "claude-sonnet-4-6",
  env: { ...process.env },
  stderr: (line) => process.stderr.write(line),
};

async function* prompts(...texts) {
  for (const t of texts) {
    yield { type: "user", message: { role: "user", content: t }, parent_tool_use_id: null, session_id: "" };
  }
}

async function run(prompt, options) {
  const seen = { results: [], texts: [], init: null, asked: [], hooked: [], toolResults: [] };
  for await (const m of query({ prompt, options: { ...base, ...options } })) {
    if (m.type === "system" && m.subtype === "init") seen.init = { tools: m.tools, model: m.model, session_id: m.session_id };
    if (m.type === "assistant") for (const b of m.message.content) if (b.type === "text") seen.texts.push(b.text);
    if (m.type === "user" && Array.isArray(m.message.content))
      for (const b of m.message.content) if (b.type === "tool_result")
        seen.toolResults.push({ is_error: !!b.is_error, tool_use_result: m.tool_use_result ?? null });
    if (m.type === "result") seen.results.push({ subtype: m.subtype, result: m.result ?? null, num_turns: m.num_turns,
      is_error: m.is_error, session_id: m.session_id, structured_output: m.structured_output ?? null });
  }
  return seen;
}

const scenarios = {
  basic: () => run("What is 2 + 2?", {}),
  write: () => run("Create hello.txt", { allowedTools: ["Write"], permissionMode: "acceptEdits" }),
  can_use_tool: async () => {
    const asked = [];
    const seen = await run(prompts("clean up"), {
      canUseTool: async (name, input) => {
        asked.push(name);
        return { behavior: "deny", message: "no shell commands here" };
      },
    });
    seen.asked = asked;
    return seen;
  },
  hooks: async () => {
    const hooked = [];
    const seen = await run(prompts("Run ./foo.sh"), {
      allowedTools: ["Bash"], permissionMode: "acceptEdits",
      hooks: { PreToolUse: [{ matcher: "Bash", hooks: [async (input) => {
        hooked.push(input.tool_name);
        return { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: "no foo.sh" } };
      }] }] },
    });
    seen.hooked = hooked;
    return seen;
  },
  multi: () => run(prompts("Remember 7.", "Which number?"), {}),
  mcp: () => {
    const add = tool("add", "Add two numbers", { a: z.number(), b: z.number() },
      async ({ a, b }) => ({ content: [{ type: "text", text: `${a} + ${b} = ${a + b}` }] }));
    const calc = createSdkMcpServer({ name: "calc", version: "1.0.0", tools: [add] });
    return run(prompts("2 + 3"), { mcpServers: { calc }, allowedTools: ["mcp__calc__add"] });
  },
  elicitation: async () => {  // an MCP server's question mid-call, answered by the SDK's onElicitation
    const elicited = [];
    const ask = { type: "stdio", command: process.env.ASK_PYTHON, args: [process.env.ASK_SERVER] };
    const seen = await run(prompts("set my preferences"), {
      mcpServers: { ask }, allowedTools: ["mcp__ask__confirm"],
      onElicitation: async (request) => {
        elicited.push(request);
        return { action: "accept", content: { color: "green", count: 5 } };
      },
    });
    seen.elicited = elicited;
    return seen;
  },
  options: () => run("What is 2 + 2?", {
    systemPrompt: "You are a pirate.", disallowedTools: ["Bash"],
    outputFormat: { type: "json_schema", schema: { type: "object", properties: { answer: { type: "integer" } }, required: ["answer"] } },
  }),
};

const out = await scenarios[scenario]();
process.stdout.write(JSON.stringify(out) + "\n");
