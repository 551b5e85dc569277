// Count cl100k_base tokens offline with js-tiktoken (its rank tables ship in the package).
//
//   echo '{"texts": {"greeting": "hello world"}}' | node count.mjs   ->  {"greeting":2}
//   node count.mjs --self-test   # checks known cl100k_base encodings; exit 1 on mismatch
//
// Texts are encoded as ordinary text: a special-token string such as "<|endoftext|>" inside a
// text is counted as the plain characters it is, like Python tiktoken's encode_ordinary.
import { Tiktoken } from "js-tiktoken/lite";
import cl100k_base from "js-tiktoken/ranks/cl100k_base";

const enc = new Tiktoken(cl100k_base);
const encode = (text) => enc.encode(text, [], []);

// Reference encodings of cl100k_base (token ids, not just counts, so that another encoding
// with the same counts cannot pass).
const KNOWN = [
  ["hello world", [15339, 1917]],
  ["tiktoken is great!", [83, 1609, 5963, 374, 2294, 0]],
];

function selfTest() {
  const results = KNOWN.map(([text, expected]) => {
    const ids = encode(text);
    const ok =
      ids.length === expected.length &&
      ids.every((id, i) => id === expected[i]) &&
      enc.decode(ids) === text;
    return { text, expected, got: ids, ok };
  });
  process.stdout.write(JSON.stringify(results) + "\n");
  return results.every((r) => r.ok);
}

async function readStdin() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  return Buffer.concat(chunks).toString("utf8");
}

async function main() {
  if (process.argv.includes("--self-test")) {
    process.exit(selfTest() ? 0 : 1);
  }
  const input = JSON.parse(await readStdin());
  const texts = input?.texts;
  if (texts === null || typeof texts !== "object" || Array.isArray(texts)) {
    throw new Error('expected JSON {"texts": {"name": "string", ...}} on stdin');
  }
  const counts = {};
  for (const [name, text] of Object.entries(texts)) {
    if (typeof text !== "string") throw new Error(`texts.${name} is not a string`);
    counts[name] = encode(text).length;
  }
  process.stdout.write(JSON.stringify(counts) + "\n");
}

main().catch((err) => {
  process.stderr.write(`count.mjs: ${err.message}\n`);
  process.exit(2);
});
