package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/simbench/simbench/internal/usage"
	"github.com/simbench/simbench/traces"
)

// agenticFlags are trace synth's --agentic and the distributions it draws
// agent sessions from.
func agenticFlags() []cli.Flag {
	d := traces.DefaultAgentic
	return []cli.Flag{
		&cli.BoolFlag{Name: "agentic", Usage: "generate agent sessions (DAGs of turns: sub-agents, joins, tool waits) " +
			"from the --agent-*, --tool-delay-*, --new-tokens* flags; --isl is an agent's first prompt, --osl every turn's output"},
		&cli.IntFlag{Name: "num-conversations", Aliases: []string{"num-sessions"}, Value: d.Sessions, Usage: "--agentic: agent sessions"},
		&cli.Float64Flag{Name: "agent-turns", Value: d.Turns, Usage: "--agentic: mean turns of a session's main agent (1 + Poisson(mean − 1))"},
		&cli.Float64Flag{Name: "agent-fanout-prob", Value: d.FanOutProb, Usage: "--agentic: chance that a main-agent turn spawns sub-agents, which its next turn waits for"},
		&cli.Float64Flag{Name: "agent-fanout", Value: d.FanOut, Usage: "--agentic: mean sub-agents per spawn (1 + Poisson(mean − 1)), run concurrently"},
		&cli.Float64Flag{Name: "agent-subturns", Value: d.SubTurns, Usage: "--agentic: mean turns of a sub-agent (1 + Poisson(mean − 1)); its first prompt is fresh"},
		&cli.Float64Flag{Name: "tool-delay-ms", Value: d.ToolDelayMs, Usage: "--agentic: median tool wait before a later turn (ms, lognormal)"},
		&cli.Float64Flag{Name: "tool-delay-sigma", Value: d.ToolDelaySigma, Usage: "--agentic: log-space σ of the tool wait (0: always the median)"},
		&cli.IntFlag{Name: "new-tokens", Value: d.NewTokens, Usage: "--agentic: median tokens a later turn adds to its context (tool result, reports; lognormal)"},
		&cli.Float64Flag{Name: "new-tokens-sigma", Value: d.NewTokensSigma, Usage: "--agentic: log-space σ of the new tokens (0: always the median)"},
	}
}

// plainSynthOnly are trace synth's flags --agentic does not use.
var plainSynthOnly = []string{"request-count", "warmup-request-count", "turns", "turn-delay-ms",
	"shared-prefix-tokens", "num-prefix-groups", "prefix-prompt-length"}

// agenticSpec reads the --agentic flags; the arrivals, lengths, block size
// and seed come from the plain synthesis flags.
func agenticSpec(c *cli.Context) (traces.AgenticSpec, error) {
	var a traces.AgenticSpec
	if n := firstSet(c, plainSynthOnly); n != "" {
		return a, usagef("--%s shapes plain requests, not --agentic sessions (see --num-conversations and the --agent-* flags)", n)
	}
	base, err := workloadSpec(c).Synth()
	if err != nil {
		return a, err
	}
	return traces.AgenticSpec{Base: base, Sessions: c.Int("num-conversations"),
		Turns: c.Float64("agent-turns"), SubTurns: c.Float64("agent-subturns"),
		FanOutProb: c.Float64("agent-fanout-prob"), FanOut: c.Float64("agent-fanout"),
		ToolDelayMs: c.Float64("tool-delay-ms"), ToolDelaySigma: c.Float64("tool-delay-sigma"),
		NewTokens: c.Int("new-tokens"), NewTokensSigma: c.Float64("new-tokens-sigma")}, nil
}

// agenticOnly reports the first --agentic flag given without --agentic.
func agenticOnly(c *cli.Context) string {
	for _, f := range agenticFlags()[1:] {
		if n := f.Names()[0]; c.IsSet(n) {
			return n
		}
	}
	return ""
}

// traceSynthAgentic writes trace synth --agentic's sessions to out.
func traceSynthAgentic(c *cli.Context, out string) error {
	spec, err := agenticSpec(c)
	if err != nil {
		return err
	}
	wl, err := traces.SynthesizeAgentic(spec)
	if err != nil {
		return usage.Wrap(err)
	}
	if err := writeTrace(c, out, wl); err != nil {
		return err
	}
	if spec.Base.Mode == traces.ModeConcurrency {
		fmt.Fprintf(c.App.ErrWriter, "warning: %s has no timestamps and the JSONL format cannot record --concurrency %d; "+
			"replay it with --concurrency %d (sessions in flight)\n", outName(out), wl.Concurrency, wl.Concurrency)
	}
	fmt.Fprintf(summaryWriter(c, out), "wrote %d agent sessions, %d requests, to %s (digest %s)\n",
		spec.Sessions, len(wl.Requests), outName(out), wl.Digest)
	return nil
}
