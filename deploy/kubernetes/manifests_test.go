package kubernetes

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// manifest is one decoded YAML document.
type manifest struct {
	file string
	job  *batchv1.Job
	pvc  *corev1.PersistentVolumeClaim
}

// decodeStrict decodes one document into the API type its kind names;
// unknown or misspelt fields are errors.
func decodeStrict(file string, doc []byte) (manifest, error) {
	var head struct{ APIVersion, Kind string }
	if err := yaml.Unmarshal(doc, &head); err != nil {
		return manifest{}, fmt.Errorf("%s: %w", file, err)
	}
	m := manifest{file: file}
	var obj any
	switch head.APIVersion + " " + head.Kind {
	case "batch/v1 Job":
		m.job = &batchv1.Job{}
		obj = m.job
	case "v1 PersistentVolumeClaim":
		m.pvc = &corev1.PersistentVolumeClaim{}
		obj = m.pvc
	default:
		return m, fmt.Errorf("%s: unexpected %s %s", file, head.APIVersion, head.Kind)
	}
	// the API server's decoding: case-sensitive names, no unknown or
	// duplicate fields (encoding/json alone would accept "mountpath")
	j, err := yaml.YAMLToJSONStrict(doc)
	if err != nil {
		return m, fmt.Errorf("%s: %w", file, err)
	}
	strict, err := sigsjson.UnmarshalStrict(j, obj, sigsjson.DisallowDuplicateFields, sigsjson.DisallowUnknownFields)
	if err = errors.Join(append(strict, err)...); err != nil {
		return m, fmt.Errorf("%s: %w", file, err)
	}
	return m, nil
}

func loadManifests(t *testing.T) []manifest {
	t.Helper()
	files, err := filepath.Glob("*.yaml")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	var out []manifest
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, doc := range bytes.Split(b, []byte("\n---\n")) {
			m, err := decodeStrict(f, doc)
			require.NoError(t, err)
			out = append(out, m)
		}
	}
	return out
}

func TestManifestsDecodeStrictly(t *testing.T) {
	claims := map[string]bool{}
	var jobs []*batchv1.Job
	for _, m := range loadManifests(t) {
		if m.pvc != nil {
			claims[m.pvc.Name] = true
			assert.Contains(t, m.pvc.Spec.AccessModes, corev1.ReadWriteMany, "%s: shards on several nodes share it", m.file)
		}
		if m.job != nil {
			jobs = append(jobs, m.job)
		}
	}
	require.NotEmpty(t, jobs)
	for _, j := range jobs {
		for _, v := range j.Spec.Template.Spec.Volumes {
			if v.PersistentVolumeClaim != nil {
				assert.True(t, claims[v.PersistentVolumeClaim.ClaimName], "%s: claim %s has no manifest", j.Name, v.PersistentVolumeClaim.ClaimName)
			}
		}
		assert.Equal(t, corev1.RestartPolicyNever, j.Spec.Template.Spec.RestartPolicy, j.Name)
	}
}

// Each sharded Job is Indexed, runs its shards at once, and its shard count
// and output directories agree with its merge Job's arguments.
func TestShardedJobs(t *testing.T) {
	jobs := map[string]*batchv1.Job{}
	for _, m := range loadManifests(t) {
		if m.job != nil {
			jobs[m.job.Name] = m.job
		}
	}
	for _, tc := range []struct{ sharded, merge, cmd, idEnv string }{
		{"simbench-run", "simbench-merge", "run", "RUN_ID"},
		{"simbench-grid", "simbench-grid-merge", "sim", "GRID_ID"},
	} {
		t.Run(tc.sharded, func(t *testing.T) {
			run, merge := jobs[tc.sharded], jobs[tc.merge]
			require.NotNil(t, run)
			require.NotNil(t, merge)
			require.NotNil(t, run.Spec.CompletionMode)
			assert.Equal(t, batchv1.IndexedCompletion, *run.Spec.CompletionMode)
			n := int(*run.Spec.Completions)
			assert.Equal(t, n, int(*run.Spec.Parallelism), "every shard runs at the same time")
			c := run.Spec.Template.Spec.Containers[0]
			assert.Equal(t, tc.cmd, c.Args[0])
			assert.Contains(t, c.Args, fmt.Sprintf("--shard-count=%d", n))
			out := flagValue(c.Args, "--output-dir")
			require.Contains(t, out, "$(JOB_COMPLETION_INDEX)")
			mc := merge.Spec.Template.Spec.Containers[0]
			assert.Equal(t, envValue(c, tc.idEnv), envValue(mc, tc.idEnv))
			assert.Equal(t, "merge", mc.Args[0])
			var shards []string
			for i := range n {
				shards = append(shards, strings.ReplaceAll(out, "$(JOB_COMPLETION_INDEX)", fmt.Sprint(i)))
			}
			assert.Equal(t, shards, mc.Args[1:n+1], "merge lists every shard directory")
			assert.Len(t, mc.Args, n+2)
		})
	}
	run := jobs["simbench-run"].Spec.Template.Spec.Containers[0]
	assert.Contains(t, run.Args, "--start-at=$(START_AT)")
	assert.Regexp(t, `^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$`, envValue(run, "START_AT"))
}

func envValue(c corev1.Container, name string) string {
	for _, e := range c.Env {
		if e.Name == name {
			return e.Value
		}
	}
	return ""
}

func flagValue(args []string, name string) string {
	re := regexp.MustCompile("^" + regexp.QuoteMeta(name) + "=(.*)$")
	for _, a := range args {
		if m := re.FindStringSubmatch(a); m != nil {
			return m[1]
		}
	}
	return ""
}

// A misspelt field fails decoding: the check above cannot pass by accident.
func TestDecodeStrictRejectsTypos(t *testing.T) {
	b, err := os.ReadFile("run-sharded-job.yaml")
	require.NoError(t, err)
	for _, tc := range []struct{ from, to string }{
		{"completionMode: Indexed", "completionMod: Indexed"},
		{"parallelism: 3", "paralelism: 3"},
		{"mountPath: /data", "mountpath: /data"},
		{"  parallelism: 3", "  parallelism: 3\n  parallelism: 4"},
		{"completionMode: Indexed", "completionMode: [Indexed]"},
	} {
		bad := strings.Replace(string(b), tc.from, tc.to, 1)
		require.NotEqual(t, string(b), bad, tc.from)
		_, err := decodeStrict("bad.yaml", []byte(bad))
		assert.Error(t, err, tc.to)
	}
}
