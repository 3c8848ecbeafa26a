package main

import (
	"fmt"

	"github.com/simbench/simbench/internal/tinygguf"
	"github.com/urfave/cli/v2"
)

// tinyModelCommand writes the random-weight GGUF model the real-engine tier
// serves with Ollama. Hidden: it is test tooling, not part of the product.
func tinyModelCommand() *cli.Command {
	d := tinygguf.Default()
	return &cli.Command{
		Name:        "tiny-model",
		Hidden:      true,
		Usage:       "write a random-weight llama model (GGUF v3) for the CPU real-engine tests",
		UsageText:   "simbench tiny-model -o tiny.gguf [--seed N] [--layers 4 --hidden 512 --ff 1536 --heads 8 --kv-heads 4 --vocab 4096]",
		Description: help("tiny-model"),
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "GGUF file to write", Required: true},
			&cli.Uint64Flag{Name: "seed", Value: d.Seed, Usage: "seed of the random weights (same seed, same file)"},
			&cli.IntFlag{Name: "layers", Value: d.Layers, Usage: "transformer blocks"},
			&cli.IntFlag{Name: "hidden", Value: d.Hidden, Usage: "embedding length"},
			&cli.IntFlag{Name: "ff", Value: d.FF, Usage: "feed-forward length"},
			&cli.IntFlag{Name: "heads", Value: d.Heads, Usage: "attention heads"},
			&cli.IntFlag{Name: "kv-heads", Value: d.KVHeads, Usage: "key/value heads"},
			&cli.IntFlag{Name: "vocab", Value: d.Vocab, Usage: fmt.Sprintf("vocabulary size (>= %d)", tinygguf.MinVocab())},
			&cli.IntFlag{Name: "context", Value: d.Context, Usage: "llama.context_length"},
			&cli.Float64Flag{Name: "eos-bias", Value: d.EOSBias, Usage: "EOS logit bias; <= 0 never stops (exact output lengths)"},
			&cli.BoolFlag{Name: "f32", Usage: "store matrices as F32 instead of F16"},
		},
		Action: tinyModelAction,
	}
}

func tinyModelAction(c *cli.Context) error {
	if c.NArg() != 0 {
		return usagef("tiny-model takes no arguments, got %q", c.Args().Slice())
	}
	cfg := tinygguf.Default()
	cfg.Seed = c.Uint64("seed")
	cfg.Layers, cfg.Hidden, cfg.FF = c.Int("layers"), c.Int("hidden"), c.Int("ff")
	cfg.Heads, cfg.KVHeads, cfg.Vocab = c.Int("heads"), c.Int("kv-heads"), c.Int("vocab")
	cfg.Context, cfg.EOSBias, cfg.F32 = c.Int("context"), c.Float64("eos-bias"), c.Bool("f32")
	m, err := tinygguf.New(cfg)
	if err != nil {
		return usagef("tiny-model: %v", err)
	}
	path := c.String("output")
	if err := m.WriteFile(path); err != nil {
		return err
	}
	fmt.Fprintf(c.App.Writer, "wrote %s: llama, %d layers, hidden %d, vocab %d, %.1fM parameters\n",
		path, cfg.Layers, cfg.Hidden, cfg.Vocab, float64(m.Params())/1e6)
	return nil
}
