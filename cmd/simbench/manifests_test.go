package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/urfave/cli/v2"
	"go.yaml.in/yaml/v3"
)

// The Kubernetes manifests call simbench: every flag they pass must be a
// flag of the command they run (deploy/kubernetes checks the Kubernetes
// side).
func TestManifestArgsAreSimbenchFlags(t *testing.T) {
	files, err := filepath.Glob("../../deploy/kubernetes/*.yaml")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	checked := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, args := range containerArgs(t, b) {
			cmd := manifestCommand(args[0])
			require.NotNil(t, cmd, "%s: no command %q", f, args[0])
			for _, a := range args[1:] {
				if name, ok := strings.CutPrefix(a, "--"); ok {
					name, _, _ = strings.Cut(name, "=")
					assert.True(t, hasFlag(cmd, name), "%s: %s has no flag --%s", f, args[0], name)
					checked++
				}
			}
		}
	}
	assert.Positive(t, checked)
}

// containerArgs returns the args of every container of every Job.
func containerArgs(t *testing.T, b []byte) [][]string {
	t.Helper()
	var out [][]string
	dec := yaml.NewDecoder(bytes.NewReader(b))
	for {
		var doc struct {
			Kind string
			Spec struct {
				Template struct {
					Spec struct {
						Containers []struct{ Args []string }
					}
				}
			}
		}
		if dec.Decode(&doc) != nil {
			return out
		}
		for _, c := range doc.Spec.Template.Spec.Containers {
			if doc.Kind == "Job" && len(c.Args) > 0 {
				out = append(out, c.Args)
			}
		}
	}
}

func manifestCommand(name string) *cli.Command {
	for _, c := range commands() {
		if c.Name == name {
			return c
		}
	}
	return nil
}

func hasFlag(cmd *cli.Command, name string) bool { return flagsHave(cmd.Flags, name) }
