package results

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// writeFiles writes each name (a path under dir) with its own name as
// content.
func writeFiles(t *testing.T, dir string, names ...string) {
	t.Helper()
	for _, n := range names {
		p := filepath.Join(dir, n)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(n), 0o644))
	}
}

// tree lists the files under dir, relative, sorted.
func tree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	require.NoError(t, filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		out = append(out, rel)
		return err
	}))
	sort.Strings(out)
	return out
}

// TestOutputDirReplacesWhole: a run written into a directory that held a
// larger earlier run (a sim with server metrics, four --repeat runs) kept
// the earlier run's files beside the new ones, and compare read them.
func TestOutputDirReplacesWhole(t *testing.T) {
	for _, tc := range []struct {
		name       string
		old, fresh []string
	}{
		{"a run", []string{RecordsName, ProfileJSONName, "sim_summary.json", "server_metrics_export.json", "ttft_breakdown.json"},
			[]string{RecordsName, ProfileJSONName}},
		{"repeated runs", []string{"run_0001/" + ProfileJSONName, "run_0002/" + ProfileJSONName, "run_0003/" + ProfileJSONName,
			"run_0004/" + ProfileJSONName}, []string{"run_0001/" + ProfileJSONName, "run_0002/" + ProfileJSONName}},
		{"a sweep", []string{"sweep_summary.json", "c1/" + RecordsName, "c2/" + RecordsName}, []string{"c1/" + RecordsName, "sweep_summary.json"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			writeFiles(t, out, tc.old...)
			require.NoError(t, WriteOutput(out, nil, DropPartial, func(dir string) error {
				assert.NotEqual(t, out, dir, "written beside the output, not into it")
				assert.Equal(t, out, PublishedPath(dir))
				writeFiles(t, dir, tc.fresh...)
				return nil
			}))
			assert.Equal(t, tc.fresh, tree(t, out), "nothing of the earlier output stays")
			entries, err := os.ReadDir(filepath.Dir(out))
			require.NoError(t, err)
			require.Len(t, entries, 1, "no staging directory or lock file is left")
			assert.Equal(t, "out", entries[0].Name())
		})
	}
}

// TestOutputDirRefusesForeignDirectory: a directory with other files was
// written into (and, now that outputs are replaced whole, would be lost).
func TestOutputDirRefusesForeignDirectory(t *testing.T) {
	out := t.TempDir()
	writeFiles(t, out, "notes.txt", "data/raw.csv")
	err := WriteOutput(out, nil, DropPartial, func(string) error {
		t.Fatal("nothing is written")
		return nil
	})
	require.ErrorIs(t, err, ErrNotOutputDir)
	assert.Contains(t, err.Error(), out+": not empty and not a simbench output: it holds data and no profile_export_aiperf.json")
	assert.Equal(t, []string{"data/raw.csv", "notes.txt"}, tree(t, out), "untouched")

	runs := t.TempDir()
	writeFiles(t, runs, "run_0001/"+ProfileJSONName, "notes.txt")
	_, err = OpenOutputDir(runs)
	require.ErrorIs(t, err, ErrNotOutputDir, "a run below is not enough: everything in it must be runs")
	assert.ErrorContains(t, err, "it holds notes.txt and no")

	file := filepath.Join(t.TempDir(), "f")
	writeFiles(t, filepath.Dir(file), "f")
	_, err = OpenOutputDir(file)
	assert.ErrorContains(t, err, file+": not a directory")

	t.Chdir(out)
	_, err = OpenOutputDir(".")
	require.ErrorIs(t, err, ErrNotOutputDir, "the working directory is never replaced")
	assert.ErrorContains(t, err, "it holds the working directory")

	empty := t.TempDir()
	require.NoError(t, WriteOutput(empty, nil, DropPartial, func(dir string) error {
		writeFiles(t, dir, RecordsName)
		return nil
	}), "an empty directory is taken")
	assert.Equal(t, []string{RecordsName}, tree(t, empty))
}

// TestOutputDirFailure: a failed writer leaves the old output as it was
// (DropPartial), or commits what it wrote (KeepPartial: a real run never
// loses a finished request); one that wrote nothing replaces nothing.
func TestOutputDirFailure(t *testing.T) {
	boom := errors.New("boom")
	for _, tc := range []struct {
		name    string
		partial Partial
		write   []string
		want    []string
	}{
		{"dropped", DropPartial, []string{RecordsName}, []string{ProfileJSONName}},
		{"kept", KeepPartial, []string{RecordsName}, []string{RecordsName}},
		{"kept but nothing written", KeepPartial, nil, []string{ProfileJSONName}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			writeFiles(t, out, ProfileJSONName)
			err := WriteOutput(out, nil, tc.partial, func(dir string) error {
				writeFiles(t, dir, tc.write...)
				return boom
			})
			require.ErrorIs(t, err, boom)
			assert.Equal(t, tc.want, tree(t, out))
			entries, err := os.ReadDir(filepath.Dir(out))
			require.NoError(t, err)
			assert.Len(t, entries, 1, "no staging directory or lock file is left")
		})
	}
}

// TestOutputDirSecondWriterRefused: two runs writing one -o at once tore
// each other's JSONL lines and both exited 0.
func TestOutputDirSecondWriterRefused(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	first, err := OpenOutputDir(out)
	require.NoError(t, err)
	_, err = OpenOutputDir(out)
	require.ErrorIs(t, err, ErrOutputBusy)
	assert.Contains(t, err.Error(), fmt.Sprintf("%s: another simbench process is writing it (pid %d, lock %s)", out, os.Getpid(),
		filepath.Join(filepath.Dir(out), ".out.simbench.lock")))
	writeFiles(t, first.Dir(), RecordsName)
	require.NoError(t, first.Commit())
	second, err := OpenOutputDir(out)
	require.NoError(t, err, "the lock is released by Commit")
	assert.Empty(t, second.Warnings())
	require.NoError(t, second.Abort())
	assert.Equal(t, []string{RecordsName}, tree(t, out))
}

// TestOutputDirDeadWriter: the lock of a writer that died (its lock file
// is there, unlocked) is taken over with a warning naming its files.
func TestOutputDirDeadWriter(t *testing.T) {
	parent := t.TempDir()
	out, staging := filepath.Join(parent, "out"), filepath.Join(parent, ".out.simbench-123")
	writeFiles(t, staging, RecordsName)
	writeFiles(t, parent, ".out.simbench.lock")
	require.NoError(t, os.WriteFile(filepath.Join(parent, ".out.simbench.lock"), []byte("999999999 "+staging+"\n"), 0o644))
	d, err := OpenOutputDir(out)
	require.NoError(t, err)
	require.Len(t, d.Warnings(), 1)
	assert.EqualError(t, d.Warnings()[0], out+": the previous writer (pid 999999999) stopped without finishing: its lock was taken over; "+
		"its partial files are in "+staging)
	require.NoError(t, d.Abort())
	assert.FileExists(t, filepath.Join(staging, RecordsName), "a dead writer's records are not removed")
}

func TestPublishedPath(t *testing.T) {
	for in, want := range map[string]string{
		"/a/.out.simbench-123/run_0001":             "/a/out/run_0001",
		"/a/.out.simbench-12/.c4.simbench-9/x.json": "/a/out/c4/x.json",
		"/a/.out.simbench-x/y":                      "/a/.out.simbench-x/y",
		"rel/.my.run.simbench-7":                    "rel/my.run",
		"/a/out":                                    "/a/out",
		"/a/.simbench-5":                            "/a/.simbench-5",
	} {
		assert.Equal(t, want, PublishedPath(in), in)
	}
}
