// Drives `mindmount mcp REPO` with the official TypeScript MCP SDK client: a
// client nobody on the mindmount side wrote. It lists the tools, creates a
// memory, views it and recalls it, and prints what it saw as one JSON
// object on stdout for cmd/mindmount's TestMCPTypeScriptClient to check.
//
// usage: node client.mjs MINDMOUNT_BINARY REPO
// (npm ci in this directory first; node_modules is git-ignored)
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [bin, repo] = process.argv.slice(2);
if (!bin || !repo) {
  console.error("usage: node client.mjs MINDMOUNT_BINARY REPO");
  process.exit(2);
}

const text = (res) => ({
  isError: Boolean(res.isError),
  text: res.content.filter((c) => c.type === "text").map((c) => c.text).join(""),
});

const transport = new StdioClientTransport({ command: bin, args: ["mcp", repo], stderr: "inherit" });
const client = new Client({ name: "ts-sdk-client", version: "1.0.0" });
await client.connect(transport);

const out = {};
out.server = client.getServerVersion();
out.instructions = client.getInstructions();
out.tools = (await client.listTools()).tools.map((t) => t.name).sort();
out.create = text(await client.callTool({
  name: "create",
  arguments: {
    path: "/memories/user_memory/likes-jazz.md",
    file_text: "---\ndescription: Listens to jazz while working\nstatus: active\n---\n# Likes Jazz\n\n## Fact\nThe user listens to jazz, mostly Coltrane, while working.\n\n## Access log\n",
  },
}));
out.invalid = text(await client.callTool({
  name: "create",
  arguments: { path: "user_memory/bad.md", file_text: "# Bad\n\nno frontmatter\n" },
}));
out.view = text(await client.callTool({ name: "view", arguments: { path: "/memories/user_memory/likes-jazz.md" } }));
out.recall = text(await client.callTool({ name: "recall", arguments: { query: "what music does the user like?", k: 3 } }));
await client.close();
process.stdout.write(JSON.stringify(out) + "\n");
