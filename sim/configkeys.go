package sim

import (
	"fmt"
	"maps"
	"os"
	"reflect"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// LoadConfig reads a YAML file over DefaultConfig. Unknown keys are errors
// naming the file, line and full key; a renamed key's warning
// (KeyWarnings) names the file too.
func LoadConfig(path string) (Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Config{}, err
	}
	cfg, err := ParseConfig(b)
	if err != nil {
		return Config{}, fmt.Errorf("%s: %w", path, err)
	}
	for i, w := range cfg.keyWarnings {
		cfg.keyWarnings[i] = fmt.Errorf("%s: %w", path, w)
	}
	return cfg, nil
}

// LoadConfigOrDefault is LoadConfig, or DefaultConfig when path is "".
func LoadConfigOrDefault(path string) (Config, error) {
	if path == "" {
		return DefaultConfig(), nil
	}
	return LoadConfig(path)
}

// ParseConfig parses a YAML document over DefaultConfig. It does not
// validate values; call Validate.
func ParseConfig(b []byte) (Config, error) {
	cfg := DefaultConfig()
	var root yaml.Node
	if err := yaml.Unmarshal(b, &root); err != nil {
		return cfg, err
	}
	if len(root.Content) == 0 {
		return cfg, nil // empty document
	}
	warns, err := moveRenamed(root.Content[0])
	if err != nil {
		return cfg, err
	}
	if err := checkKeys(root.Content[0], reflect.TypeOf(cfg), ""); err != nil {
		return cfg, err
	}
	if mappingValue(root.Content[0], "disaggregation") != nil {
		cfg.Disaggregation = DefaultDisaggregation() // the keys given are decoded over its defaults
	}
	if err := root.Decode(&cfg); err != nil { // checkKeys has refused every unknown key
		return cfg, err
	}
	cfg.keyWarnings = warns
	unnameModel(root.Content[0], &cfg.Hardware)
	if err := resolvePools(root.Content[0], &cfg); err != nil {
		return cfg, err
	}
	if cfg.Disaggregated() && mappingValue(root.Content[0], "workers") == nil {
		cfg.Workers = cfg.Disaggregation.PrefillWorkers + cfg.Disaggregation.DecodeWorkers
	}
	return cfg, nil
}

// unnameModel clears the default hardware.model when the document gives
// hardware.model_config without a model name: the preset's name would
// label a run of another model.
func unnameModel(root *yaml.Node, h *HardwareConfig) {
	if hw := mappingValue(root, "hardware"); hw != nil && mappingValue(hw, "model_config") != nil && mappingValue(hw, "model") == nil {
		h.Model = ""
	}
}

// checkKeys reports the first mapping key of n that t has no field for, with
// its line and dotted path.
func checkKeys(n *yaml.Node, t reflect.Type, path string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() == reflect.Slice && n.Kind == yaml.SequenceNode {
		return checkElems(n, t, path, checkKeys) // a list of sections
	}
	if t.Kind() != reflect.Struct || n.Kind != yaml.MappingNode {
		return nil
	}
	fields := yamlFields(t)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		key := joinKey(path, k.Value)
		ft, ok := fields[k.Value]
		if !ok {
			return fmt.Errorf("line %d: unknown key %q (known under %s: %s)",
				k.Line, key, orRoot(path), strings.Join(slices.Sorted(maps.Keys(fields)), ", "))
		}
		if err := checkInts(v, ft, key); err != nil {
			return err
		}
		if err := checkKeys(v, ft, key); err != nil {
			return err
		}
	}
	return nil
}

// checkInts refuses a non-integer scalar (2.5, 1e3) for an integer key, or
// in a list of integers: the YAML decoder would truncate it silently.
func checkInts(v *yaml.Node, t reflect.Type, key string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() == reflect.Slice && v.Kind == yaml.SequenceNode {
		return checkElems(v, t, key, checkInts)
	}
	if v.Kind != yaml.ScalarNode || !isIntKind(t.Kind()) || v.ShortTag() == "!!int" || v.ShortTag() == "!!null" {
		return nil
	}
	return fmt.Errorf("line %d: %s: want an integer, got %s", v.Line, key, v.Value)
}

// checkElems checks each element of the sequence v, of the slice type t,
// as key[i].
func checkElems(v *yaml.Node, t reflect.Type, key string, check func(*yaml.Node, reflect.Type, string) error) error {
	for i, e := range v.Content {
		if err := check(e, t.Elem(), fmt.Sprintf("%s[%d]", key, i)); err != nil {
			return err
		}
	}
	return nil
}

func isIntKind(k reflect.Kind) bool {
	return k >= reflect.Int && k <= reflect.Uint64
}

func yamlFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "" || name == "-" {
			continue
		}
		out[name] = f.Type
	}
	return out
}

func joinKey(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

func orRoot(path string) string {
	if path == "" {
		return "the top level"
	}
	return path
}
