package peerruns

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"
)

// configName is the copy of its configuration inference-perf writes into
// the report directory.
const configName = "config.yaml"

// ipConfig is the part of inference-perf's config.yaml that describes the
// workload and the client.
type ipConfig struct {
	API struct {
		Type      string `yaml:"type"`
		Streaming *bool  `yaml:"streaming"`
	} `yaml:"api"`
	Data struct {
		Type               string          `yaml:"type"`
		InputDistribution  *ipDistribution `yaml:"input_distribution"`
		OutputDistribution *ipDistribution `yaml:"output_distribution"`
		SharedPrefix       *ipSharedPrefix `yaml:"shared_prefix"`
	} `yaml:"data"`
	Load struct {
		Type                 string        `yaml:"type"`
		Stages               []ipLoadStage `yaml:"stages"`
		Sweep                *yaml.Node    `yaml:"sweep"`
		NumWorkers           *int          `yaml:"num_workers"`
		WorkerMaxConcurrency *int          `yaml:"worker_max_concurrency"`
		BaseSeed             *int64        `yaml:"base_seed"`
	} `yaml:"load"`
	Server struct {
		Type      string `yaml:"type"`
		ModelName string `yaml:"model_name"`
		IgnoreEOS *bool  `yaml:"ignore_eos"`
	} `yaml:"server"`

	path string
	root *yaml.Node
}

// ipLoadStage is one of load.stages: a rate for a duration (constant,
// poisson) or a request count at a concurrency (concurrent).
type ipLoadStage struct {
	Rate             float64 `yaml:"rate"`
	Duration         float64 `yaml:"duration"`
	NumRequests      int     `yaml:"num_requests"`
	ConcurrencyLevel int     `yaml:"concurrency_level"`
}

// ipDistribution is inference-perf's length distribution.
type ipDistribution struct {
	Min    *int     `yaml:"min"`
	Max    *int     `yaml:"max"`
	Mean   *float64 `yaml:"mean"`
	StdDev *float64 `yaml:"std_dev"`
	Type   string   `yaml:"type"`
}

// ipSharedPrefix is data.shared_prefix; both spellings of the counts are
// accepted, as inference-perf accepts them.
type ipSharedPrefix struct {
	NumGroups               *int            `yaml:"num_groups"`
	NumUniqueSystemPrompts  *int            `yaml:"num_unique_system_prompts"`
	NumPromptsPerGroup      *int            `yaml:"num_prompts_per_group"`
	NumUsersPerSystemPrompt *int            `yaml:"num_users_per_system_prompt"`
	SystemPromptLen         yaml.Node       `yaml:"system_prompt_len"`
	QuestionLen             yaml.Node       `yaml:"question_len"`
	OutputLen               yaml.Node       `yaml:"output_len"`
	Seed                    *int64          `yaml:"seed"`
	QuestionDistribution    *ipDistribution `yaml:"question_distribution"`
	OutputDistribution      *ipDistribution `yaml:"output_distribution"`
	EnableMultiTurnChat     bool            `yaml:"enable_multi_turn_chat"`
}

// findIPConfig reads the config.yaml of the report in dir: inference-perf
// writes it beside the stage files; a copy in the directory above is
// read when there is none there. No config.yaml is an empty ipConfig
// (path ""), whose stages are read without a workload.
func findIPConfig(dir string) (*ipConfig, error) {
	for _, d := range []string{dir, filepath.Dir(filepath.Clean(dir))} {
		if p := filepath.Join(d, configName); isFile(p) {
			return readIPConfig(p)
		}
	}
	return &ipConfig{}, nil
}

func readIPConfig(path string) (*ipConfig, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var root yaml.Node
	if err := yaml.Unmarshal(b, &root); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	cfg := &ipConfig{path: path, root: &root}
	if err := root.Decode(cfg); err != nil {
		var te *yaml.TypeError
		if errors.As(err, &te) {
			return nil, fmt.Errorf("%s: %s", path, strings.Join(te.Errors, "; "))
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return cfg, nil
}

// errorf is an error at the config field named by path (mapping keys and
// sequence indices), with the line it is on, or its nearest parent's.
func (c *ipConfig) errorf(path []any, format string, args ...any) error {
	return fmt.Errorf("%s:%d: %s: %s", c.path, lineOf(c.root, path), fieldName(path), fmt.Sprintf(format, args...))
}

func fieldName(path []any) string {
	var b strings.Builder
	for _, p := range path {
		switch p := p.(type) {
		case int:
			fmt.Fprintf(&b, "[%d]", p)
		default:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			fmt.Fprint(&b, p)
		}
	}
	return b.String()
}

// lineOf walks path from the document root and returns the line of the
// deepest node it reaches.
func lineOf(root *yaml.Node, path []any) int {
	n := root
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	line := n.Line
	for _, p := range path {
		next := child(n, p)
		if next == nil {
			break
		}
		n, line = next, next.Line
	}
	return line
}

func child(n *yaml.Node, p any) *yaml.Node {
	switch p := p.(type) {
	case int:
		if n.Kind == yaml.SequenceNode && p >= 0 && p < len(n.Content) {
			return n.Content[p]
		}
	case string:
		if n.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == p {
					return n.Content[i+1]
				}
			}
		}
	}
	return nil
}

// fixedLen reads a shared_prefix length: an integer (its default when
// absent); a distribution is refused.
func (c *ipConfig) fixedLen(n *yaml.Node, field string, def int) (int, error) {
	path := []any{"data", "shared_prefix", field}
	switch {
	case n.Kind == 0 || n.Tag == "!!null":
		return def, nil
	case n.Kind != yaml.ScalarNode:
		return 0, c.errorf(path, "a length distribution is not supported here; give a fixed number of tokens")
	}
	var v int
	if err := n.Decode(&v); err != nil || v < 0 {
		return 0, c.errorf(path, "%q is not a number of tokens", n.Value)
	}
	return v, nil
}

// firstInt is the first of the alternative spellings that is set, else def.
func firstInt(def int, vs ...*int) int {
	for _, v := range vs {
		if v != nil {
			return *v
		}
	}
	return def
}
