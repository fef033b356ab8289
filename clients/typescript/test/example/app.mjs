// The SDK's example app, unchanged apart from the import: register, write a
// file where the app sees the shared context (BERTH_CONTEXT_DATA, its mount),
// tag it, query for it. Prints the query's results as JSON.
import { SemanticFsClient } from "@semfs/client";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";

const context = process.env.BERTH_CONTEXT_DATA;
const fs = new SemanticFsClient();

await fs.register({ app: "notes" });

const file = path.join(context, "notes", "auth", "login-failure.md");
await mkdir(path.dirname(file), { recursive: true });
await writeFile(file, "Users cannot log in after the 2.3 upgrade.\n");

await fs.tag(file, { task: "fix auth bug", relatedApps: ["code-editor"] });

const results = await fs.query("auth bug", 5);
console.log(JSON.stringify(results));
