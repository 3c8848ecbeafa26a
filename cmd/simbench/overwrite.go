package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/simbench/simbench/capacity"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/servermetrics"
	"github.com/simbench/simbench/sim"
	"github.com/simbench/simbench/traces"
)

// runFileNames are the files the readers of a run directory open beside a
// file given as input.
var runFileNames = []string{results.ProfileJSONName, results.ProfileCSVName, results.RecordsName,
	servermetrics.JSONName, servermetrics.CSVName, servermetrics.TTFTBreakdownName, sim.SummaryName,
	capacity.SummaryName, traces.WorkloadFile}

// refuseInputAsOutput is a usage error when the output path out would
// overwrite an input: out is one of inputs, lies inside an input directory,
// or is a run file beside an input file (which its reader also opens).
func refuseInputAsOutput(flag, out string, inputs []string) error {
	if out == "" {
		return nil
	}
	for _, in := range inputs {
		if in == "" {
			continue
		}
		st, err := os.Stat(in)
		inDir := err == nil && st.IsDir()
		switch {
		case samePath(out, in),
			inDir && within(out, in),
			!inDir && samePath(filepath.Dir(out), filepath.Dir(in)) && slices.Contains(runFileNames, filepath.Base(out)):
			return usagef("%s %s is an input or inside one (%s): write the output elsewhere", flag, out, in)
		}
	}
	return nil
}

// samePath reports whether a and b name one file: the same file when both
// exist, else the same absolute path.
func samePath(a, b string) bool {
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	if errA == nil && errB == nil {
		return os.SameFile(sa, sb)
	}
	return absPath(a) == absPath(b)
}

// within reports whether path lies inside the directory dir: one of its
// parents is dir.
func within(path, dir string) bool {
	for p := absPath(path); ; {
		parent := filepath.Dir(p)
		if parent == p {
			return false
		}
		if samePath(parent, dir) {
			return true
		}
		p = parent
	}
}

func absPath(p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		return filepath.Clean(p)
	}
	return strings.TrimRight(a, string(filepath.Separator))
}
