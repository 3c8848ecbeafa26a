package sim

import (
	"bytes"
	"slices"

	"go.yaml.in/yaml/v3"
)

// annotate adds configDocs comments to the mapping n and prints short
// number lists inline.
func annotate(n *yaml.Node, path string) {
	if n.Kind == yaml.SequenceNode && scalars(n) {
		n.Style = yaml.FlowStyle
	}
	if n.Kind != yaml.MappingNode {
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		key := joinKey(path, n.Content[i].Value)
		if doc, ok := configDocs[key]; ok {
			target := n.Content[i]
			if n.Content[i+1].Kind == yaml.SequenceNode {
				target = n.Content[i+1] // a key's comment is misplaced after a flow sequence
			}
			target.LineComment = doc
		}
		annotate(n.Content[i+1], key)
	}
}

func scalars(n *yaml.Node) bool {
	for _, c := range n.Content {
		if c.Kind != yaml.ScalarNode {
			return false
		}
	}
	return true
}

// YAML returns the configuration as a commented YAML document.
func (c Config) YAML() ([]byte, error) { return c.yaml(false) }

// UsedTimingYAML is YAML with only the timing model timing.model names:
// the others' sections, which the simulator does not use, are left to
// their defaults. It is what a written sim.yaml holds (calibrate's,
// --print-config's); YAML, every section, is what the grid sets keys in
// and the benchmark id hashes.
func (c Config) UsedTimingYAML() ([]byte, error) { return c.yaml(true) }

func (c Config) yaml(usedTiming bool) ([]byte, error) {
	var doc yaml.Node
	if err := doc.Encode(c); err != nil {
		return nil, err
	}
	if usedTiming {
		dropUnusedTiming(mappingValue(&doc, "timing"), c.Timing.Model)
	}
	annotate(&doc, "")
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// dropUnusedTiming removes from the timing mapping t the sections of the
// timing models other than model.
func dropUnusedTiming(t *yaml.Node, model string) {
	if t == nil {
		return
	}
	keep := t.Content[:0]
	for i := 0; i+1 < len(t.Content); i += 2 {
		k := t.Content[i].Value
		if k != model && slices.Contains(TimingModels(), k) {
			continue
		}
		keep = append(keep, t.Content[i], t.Content[i+1])
	}
	t.Content = keep
}
