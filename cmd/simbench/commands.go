package main

import "github.com/urfave/cli/v2"

// commands lists every sub-command; each lives in its own file.
func commands() []*cli.Command {
	return []*cli.Command{
		summarizeCommand(),
		calibrateCommand(),
		traceCommand(),
		tinyModelCommand(),
		compareCommand(),
		plotCommand(),
		reportCommand(),
		simCommand(),
		serveCommand(),
		runCommand(),
		mergeCommand(),
		validateCommand(),
		fidelityCommand(),
	}
}
