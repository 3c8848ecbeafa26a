package main

import (
	"runtime/debug"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestUsageMistakesExitTwo: an unknown command exited 3 (the code of a
// breached threshold) and a missing required flag printed the whole help
// before the error (issue 41 item 1). Each mistake is now exit 2 and one
// line on stderr, with the nearest name when one is close.
func TestUsageMistakesExitTwo(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"unknown command", []string{"nosuch"}, "simbench: unknown command \"nosuch\": want one of summarize, calibrate, " +
			"trace, compare, plot, report, sim, serve, run, merge, validate, fidelity\n"},
		{"misspelt command", []string{"comapre", "a", "b"}, "simbench: unknown command \"comapre\" (did you mean \"compare\"?); see 'simbench --help'\n"},
		{"help of no command", []string{"help", "nosuch"}, "simbench: unknown command \"nosuch\": want one of summarize, calibrate, " +
			"trace, compare, plot, report, sim, serve, run, merge, validate, fidelity\n"},
		{"unknown global flag", []string{"--nosuch"}, "simbench: unknown flag --nosuch; see 'simbench --help'\n"},
		{"unknown flag", []string{"run", "--nosuch"}, "simbench: run: unknown flag --nosuch; see 'simbench run --help'\n"},
		{"misspelt flag", []string{"run", "--max-eror-rate", "1"},
			"simbench: run: unknown flag --max-eror-rate (did you mean --max-error-rate?); see 'simbench run --help'\n"},
		{"misspelt sub-command flag", []string{"trace", "info", "--fromat", "json", "x"},
			"simbench: trace info: unknown flag --fromat (did you mean --format?); see 'simbench trace info --help'\n"},
		{"missing required flags", []string{"run", "--url", "localhost:8000"},
			"simbench: run needs --output-dir (-o) and --model (-m); see 'simbench run --help'\n"},
		{"missing required output", []string{"plot", "x"}, "simbench: plot needs --output-dir (-o); see 'simbench plot --help'\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := simbench(t, tt.args...)
			assert.Equal(t, exitUsage, code)
			assert.Equal(t, tt.want, stderr)
			assert.Empty(t, stdout, "no help printed")
		})
	}
}

// TestHelpStillWorks: the app's action took over from urfave/cli's help.
func TestHelpStillWorks(t *testing.T) {
	for _, args := range [][]string{nil, {"help"}, {"--help"}, {"help", "run"}} {
		code, stdout, stderr := simbench(t, args...)
		assert.Equal(t, exitOK, code, args)
		assert.Contains(t, stdout, "USAGE:", args)
		assert.Empty(t, stderr, args)
	}
	_, stdout, _ := simbench(t, "run", "--help")
	assert.Contains(t, stdout, "run directory to write the AIPerf files into (required)", "a required flag says so")
}

func TestVersion(t *testing.T) {
	code, stdout, stderr := simbench(t, "--version")
	assert.Equal(t, exitOK, code)
	assert.Empty(t, stderr)
	assert.True(t, strings.HasPrefix(stdout, "simbench "), stdout)
	assert.Equal(t, 1, strings.Count(stdout, "\n"), "one line")
}

func TestFormatVersion(t *testing.T) {
	tests := []struct {
		name string
		info debug.BuildInfo
		want string
	}{
		{"release", debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.4.0"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "af2388a57c31e4bd1c880ee9a386c7c233fc2088"}, {Key: "vcs.time", Value: "2026-12-05T12:00:00Z"},
			{Key: "vcs.modified", Value: "false"}}},
			"simbench v0.4.0 (revision af2388a57c31e4bd1c880ee9a386c7c233fc2088, 2026-12-05T12:00:00Z) go1.26.8"},
		{"modified checkout", debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "af2388a"}, {Key: "vcs.modified", Value: "true"}}},
			"simbench (devel) (revision af2388a, modified) go1.26.8"},
		{"no VCS stamp", debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}}, "simbench (devel) go1.26.8"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, formatVersion(&tt.info), tt.name)
	}
}
