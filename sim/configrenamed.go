package sim

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// renamedKeys are keys that moved to another section, old spelling first:
// a document that spells one the old way still loads, as the new key, and
// says so in a warning (Config.KeyWarnings). The load generator's knobs
// left frontend:, the server's, for client:.
var renamedKeys = []struct{ old, new string }{
	{"frontend.client_gap_ms", "client.gap_ms"},
	{"frontend.client_gap_samples_ms", "client.gap_samples_ms"},
	{"frontend.client_stall_ms", "client.stall_ms"},
	{"frontend.client_stall_every_ms", "client.stall_every_ms"},
	{"frontend.tie_order", "client.tie_order"},
}

// CurrentKey is key's current spelling: the new key of a renamed one
// (ok true), else key itself.
func CurrentKey(key string) (string, bool) {
	for _, r := range renamedKeys {
		if r.old == key {
			return r.new, true
		}
	}
	return key, false
}

// renamedWarning says that a document spelled key the old way.
func renamedWarning(line int, old, cur string) error {
	return fmt.Errorf("line %d: %s is deprecated, read as %s (the load generator's, apart from the server's frontend:)", line, old, cur)
}

// moveRenamed moves every renamed key of the document's root mapping to
// its new place and returns a warning for each; a key given both ways is
// an error.
func moveRenamed(root *yaml.Node) ([]error, error) {
	var warns []error
	for _, r := range renamedKeys {
		line, err := moveKey(root, r.old, r.new)
		if err != nil {
			return nil, err
		}
		if line > 0 {
			warns = append(warns, renamedWarning(line, r.old, r.new))
		}
	}
	return warns, nil
}

// moveKey moves the section key old ("section.leaf") of root to new, and
// returns its line (0: root has no old key).
func moveKey(root *yaml.Node, old, cur string) (int, error) {
	oldSec, oldLeaf, _ := strings.Cut(old, ".")
	sec := mappingValue(root, oldSec)
	i := keyIndex(sec, oldLeaf)
	if i < 0 {
		return 0, nil
	}
	newSec, newLeaf, _ := strings.Cut(cur, ".")
	dst := sectionNode(root, newSec)
	if dst == nil {
		return 0, nil // not a mapping: the decoder reports it
	}
	k, v := sec.Content[i], sec.Content[i+1]
	if j := keyIndex(dst, newLeaf); j >= 0 {
		return 0, fmt.Errorf("line %d: %s is %s (line %d) under its old name; keep %s", k.Line, old, cur, dst.Content[j].Line, cur)
	}
	sec.Content = append(sec.Content[:i], sec.Content[i+2:]...)
	moved := *k
	moved.Value = newLeaf
	dst.Content = append(dst.Content, &moved, v)
	return k.Line, nil
}

// keyIndex is the index of key's key node in the mapping n, or -1.
func keyIndex(n *yaml.Node, key string) int {
	if n == nil || n.Kind != yaml.MappingNode {
		return -1
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return i
		}
	}
	return -1
}

// sectionNode is root's mapping under name, added when absent or null;
// nil when it is something else.
func sectionNode(root *yaml.Node, name string) *yaml.Node {
	n := mappingValue(root, name)
	switch {
	case n == nil:
		n = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		root.Content = append(root.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: name}, n)
	case n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null":
		*n = yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: n.Line, Column: n.Column}
	case n.Kind != yaml.MappingNode:
		return nil
	}
	return n
}
