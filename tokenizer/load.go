package tokenizer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/dlclark/regexp2/v2"
	"golang.org/x/text/unicode/norm"
)

// gpt2Pattern is ByteLevel's own split when use_regex is true.
const gpt2Pattern = `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`

// Load reads a tokenizer from path: a tokenizer.json file, a directory
// holding tokenizer.json and, optionally, tokenizer_config.json (a Hugging
// Face snapshot, whose files are links into blobs/), or a model's Hugging
// Face cache directory, read at the snapshot refs/main names.
func Load(path string) (*Tokenizer, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	file, cfgFile := path, ""
	if st.IsDir() {
		if path, err = snapshotDir(path); err != nil {
			return nil, fmt.Errorf("tokenizer: %w", err)
		}
		file = filepath.Join(path, "tokenizer.json")
		cfgFile = filepath.Join(path, "tokenizer_config.json")
	}
	data, err := readBounded(file)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	t, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %s: %w", file, err)
	}
	t.name = path
	if cfgFile != "" {
		if t.config, err = loadConfig(cfgFile); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// snapshotDir resolves a model's Hugging Face cache directory
// (hub/models--ORG--NAME: refs/, snapshots/, blobs/) to the snapshot its
// refs/main names; a directory holding tokenizer.json, or any other, is
// itself.
func snapshotDir(dir string) (string, error) {
	if _, err := os.Stat(filepath.Join(dir, "tokenizer.json")); err == nil {
		return dir, nil
	}
	ref, err := os.ReadFile(filepath.Join(dir, "refs", "main"))
	if err != nil {
		return dir, nil // not a cache directory: reading tokenizer.json says what is missing
	}
	rev := strings.TrimSpace(string(ref))
	if rev == "" || rev == "." || rev == ".." || strings.ContainsAny(rev, `/\`) {
		return "", fmt.Errorf("%s: %q is not a revision", filepath.Join(dir, "refs", "main"), rev)
	}
	return filepath.Join(dir, "snapshots", rev), nil
}

// maxFileBytes bounds a tokenizer file: the largest Hugging Face
// tokenizer.json files are a few tens of MB.
const maxFileBytes = 256 << 20

// readBounded reads file whole: a regular file of at most maxFileBytes (a
// device such as /dev/zero, or the wrong file, would exhaust memory).
func readBounded(file string) ([]byte, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	switch {
	case err != nil:
		return nil, err
	case !st.Mode().IsRegular():
		return nil, fmt.Errorf("%s: not a regular file", file)
	case st.Size() > maxFileBytes:
		return nil, fmt.Errorf("%s: %d MiB, larger than a tokenizer file can be (%d MiB)", file, st.Size()>>20, maxFileBytes>>20)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxFileBytes+1))
	if err == nil && len(data) > maxFileBytes {
		err = errors.New("grew beyond " + strconv.Itoa(maxFileBytes>>20) + " MiB while read")
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return data, nil
}

func loadConfig(file string) (Config, error) {
	data, err := readBounded(file)
	if errors.Is(err, fs.ErrNotExist) {
		return Config{}, nil
	}
	if err != nil {
		return Config{}, fmt.Errorf("tokenizer: %w", err)
	}
	var c struct {
		ChatTemplate   json.RawMessage `json:"chat_template"`
		TokenizerClass string          `json:"tokenizer_class"`
	}
	if err := json.Unmarshal(data, &c); err != nil {
		return Config{}, fmt.Errorf("tokenizer: %s: %w", file, err)
	}
	tmpl := len(c.ChatTemplate) > 0 && string(c.ChatTemplate) != "null" && string(c.ChatTemplate) != `""`
	return Config{ChatTemplate: tmpl, TokenizerClass: c.TokenizerClass}, nil
}

// file is the part of tokenizer.json this package reads.
type file struct {
	AddedTokens  []fileAdded     `json:"added_tokens"`
	Normalizer   *component      `json:"normalizer"`
	PreTokenizer *component      `json:"pre_tokenizer"`
	Model        *fileModel      `json:"model"`
	Decoder      json.RawMessage `json:"decoder"`
}

type fileAdded struct {
	ID         int32  `json:"id"`
	Content    string `json:"content"`
	SingleWord bool   `json:"single_word"`
	LStrip     bool   `json:"lstrip"`
	RStrip     bool   `json:"rstrip"`
}

// component is a normalizer or pre-tokenizer (one struct for both: their
// fields do not clash).
type component struct {
	Type           string       `json:"type"`
	Normalizers    []*component `json:"normalizers"`
	PreTokenizers  []*component `json:"pretokenizers"`
	Pattern        *pattern     `json:"pattern"`
	Behavior       string       `json:"behavior"`
	Invert         bool         `json:"invert"`
	AddPrefixSpace bool         `json:"add_prefix_space"`
	UseRegex       *bool        `json:"use_regex"`
}

type pattern struct {
	Regex  *string `json:"Regex"`
	String *string `json:"String"`
}

type fileModel struct {
	Type         string            `json:"type"`
	Vocab        map[string]int32  `json:"vocab"`
	Merges       []json.RawMessage `json:"merges"`
	ByteFallback bool              `json:"byte_fallback"`
	IgnoreMerges bool              `json:"ignore_merges"`
	Prefix       string            `json:"continuing_subword_prefix"`
	Suffix       string            `json:"end_of_word_suffix"`
}

// Parse builds a tokenizer from tokenizer.json's contents.
func Parse(data []byte) (*Tokenizer, error) {
	var f file
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, err
	}
	m := f.Model
	switch {
	case m == nil:
		return nil, errors.New(`no "model"`)
	case m.Type != "BPE":
		return nil, fmt.Errorf(`model.type %q: only byte-level "BPE" is supported`, m.Type)
	case m.ByteFallback:
		return nil, errors.New("model.byte_fallback: SentencePiece-style BPE is not supported, only byte-level BPE")
	case m.Prefix != "" || m.Suffix != "":
		return nil, errors.New("model.continuing_subword_prefix/end_of_word_suffix: not supported with byte-level BPE")
	}
	t := &Tokenizer{ignore: m.IgnoreMerges, cache: map[string]cached{}}
	var err error
	if t.forms, err = normalizers(f.Normalizer, "normalizer"); err != nil {
		return nil, err
	}
	byteLevel := false
	if t.steps, err = preTokenizers(f.PreTokenizer, "pre_tokenizer", &byteLevel); err != nil {
		return nil, err
	}
	if !byteLevel {
		return nil, errors.New(`pre_tokenizer: no "ByteLevel" step: only byte-level BPE is supported`)
	}
	if err := t.loadVocab(m); err != nil {
		return nil, err
	}
	if err := t.loadAdded(f.AddedTokens); err != nil {
		return nil, err
	}
	return t, nil
}

func normalizers(c *component, field string) ([]norm.Form, error) {
	if c == nil {
		return nil, nil
	}
	forms := map[string]norm.Form{"NFC": norm.NFC, "NFD": norm.NFD, "NFKC": norm.NFKC, "NFKD": norm.NFKD}
	if f, ok := forms[c.Type]; ok {
		return []norm.Form{f}, nil
	}
	if c.Type != "Sequence" {
		return nil, fmt.Errorf("%s.type %q: not supported (NFC, NFD, NFKC, NFKD, Sequence)", field, c.Type)
	}
	var out []norm.Form
	for i, n := range c.Normalizers {
		fs, err := normalizers(n, fmt.Sprintf("%s.normalizers[%d]", field, i))
		if err != nil {
			return nil, err
		}
		out = append(out, fs...)
	}
	return out, nil
}

func preTokenizers(c *component, field string, byteLevel *bool) ([]step, error) {
	if c == nil {
		return nil, nil
	}
	switch c.Type {
	case "Sequence":
		var out []step
		for i, p := range c.PreTokenizers {
			s, err := preTokenizers(p, fmt.Sprintf("%s.pretokenizers[%d]", field, i), byteLevel)
			if err != nil {
				return nil, err
			}
			out = append(out, s...)
		}
		return out, nil
	case "ByteLevel":
		*byteLevel = true
		s := step{prefix: c.AddPrefixSpace}
		if c.UseRegex == nil || *c.UseRegex {
			s.re, s.fast = regexp2.MustCompile(gpt2Pattern, regexp2.None), fastMatcher(gpt2Pattern)
		}
		return []step{s}, nil
	case "Split":
		return splitStep(c, field)
	}
	return nil, fmt.Errorf("%s.type %q: not supported (Sequence, Split, ByteLevel)", field, c.Type)
}

func splitStep(c *component, field string) ([]step, error) {
	if c.Behavior != "Isolated" || c.Invert {
		return nil, fmt.Errorf("%s: Split behavior %q (invert %v): only Isolated, not inverted, is supported", field, c.Behavior, c.Invert)
	}
	var expr string
	switch {
	case c.Pattern != nil && c.Pattern.Regex != nil:
		expr = *c.Pattern.Regex
	case c.Pattern != nil && c.Pattern.String != nil:
		expr = regexp2.Escape(*c.Pattern.String)
	default:
		return nil, fmt.Errorf("%s.pattern: neither Regex nor String", field)
	}
	re, err := regexp2.Compile(expr, regexp2.None)
	if err != nil {
		return nil, fmt.Errorf("%s.pattern: %w", field, err)
	}
	return []step{{re: re, fast: fastMatcher(expr)}}, nil
}

// loadVocab decodes the byte-level vocabulary and merges into raw bytes.
func (t *Tokenizer) loadVocab(m *fileModel) error {
	if len(m.Vocab) == 0 {
		return errors.New("model.vocab: empty")
	}
	t.vocab = make(map[string]int32, len(m.Vocab))
	t.pieces = make(map[int32]string, len(m.Vocab))
	for tok, id := range m.Vocab {
		raw, ok := unByteLevel(tok)
		if !ok {
			return fmt.Errorf("model.vocab: token %q is not byte-level encoded", tok)
		}
		t.vocab[raw] = id
		t.pieces[id] = raw
	}
	for b := range 256 {
		id, ok := t.vocab[string([]byte{byte(b)})]
		if !ok {
			return fmt.Errorf("model.vocab: no token for byte 0x%02x (a byte-level vocabulary has all 256)", b)
		}
		t.byteID[b] = id
	}
	t.merges = make(map[uint64]mergeTo, len(m.Merges))
	for i, raw := range m.Merges {
		a, b, err := mergePair(raw)
		if err != nil {
			return fmt.Errorf("model.merges[%d]: %w", i, err)
		}
		ra, oka := unByteLevel(a)
		rb, okb := unByteLevel(b)
		ia, ina := t.vocab[ra]
		ib, inb := t.vocab[rb]
		id, inm := t.vocab[ra+rb]
		if !oka || !okb || !ina || !inb || !inm {
			return fmt.Errorf("model.merges[%d]: %q + %q: a part or the merge is not in the vocabulary", i, a, b)
		}
		t.merges[pairKey(ia, ib)] = mergeTo{rank: int32(i), id: id}
	}
	return nil
}

// mergePair reads "a b" or ["a", "b"].
func mergePair(raw json.RawMessage) (string, string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '[' {
		var p []string
		if err := json.Unmarshal(raw, &p); err != nil || len(p) != 2 {
			return "", "", fmt.Errorf("want two strings, got %s", raw)
		}
		return p[0], p[1], nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", "", fmt.Errorf("want \"a b\" or [a, b], got %s", raw)
	}
	a, b, ok := strings.Cut(s, " ")
	if !ok || strings.Contains(b, " ") {
		return "", "", fmt.Errorf("want \"a b\", got %q", s)
	}
	return a, b, nil
}

func (t *Tokenizer) loadAdded(added []fileAdded) error {
	for i, a := range added {
		switch {
		case a.Content == "":
			return fmt.Errorf("added_tokens[%d]: empty content", i)
		case a.SingleWord || a.LStrip || a.RStrip:
			return fmt.Errorf("added_tokens[%d] %q: single_word/lstrip/rstrip are not supported", i, a.Content)
		}
		t.added = append(t.added, addedToken{content: []byte(a.Content), id: a.ID})
		t.first[a.Content[0]] = true
		t.pieces[a.ID] = a.Content
	}
	sort.SliceStable(t.added, func(i, j int) bool { return len(t.added[i].content) > len(t.added[j].content) })
	return nil
}

// runeByte maps the printable rune GPT-2's byte-level encoding uses for a
// byte back to the byte.
var runeByte = func() (r2b map[rune]byte) {
	r2b = make(map[rune]byte, 256)
	n := 0
	for b := range 256 {
		printable := b >= '!' && b <= '~' || b >= 0xA1 && b <= 0xAC || b >= 0xAE && b <= 0xFF
		r := rune(b)
		if !printable {
			r = rune(256 + n)
			n++
		}
		r2b[r] = byte(b)
	}
	return r2b
}()

// unByteLevel decodes a byte-level token string into its raw bytes.
func unByteLevel(s string) (string, bool) {
	out := make([]byte, 0, len(s))
	for _, r := range s {
		b, ok := runeByte[r]
		if !ok {
			return "", false
		}
		out = append(out, b)
	}
	return string(out), true
}
