// Package interrupt turns SIGINT and SIGTERM into a cancelled context: the
// first signal cancels (the command stops sending and writes its files),
// the second exits at once.
package interrupt

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// ExitCode is the exit code of a command stopped by a signal (128 +
// SIGINT).
const ExitCode = 130

// Context is cancelled by the first SIGINT/SIGTERM; a second one calls
// exit(ExitCode) at once. stop ends the watch.
func Context(parent context.Context, errw io.Writer, exit func(int)) (ctx context.Context, stop func()) {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	ctx, stopWatch := Watch(parent, sigs, errw, exit)
	return ctx, func() { signal.Stop(sigs); stopWatch() }
}

// Watch cancels the returned context at the first value on sigs and calls
// exit at the second. stop ends the watch.
func Watch(parent context.Context, sigs <-chan os.Signal, errw io.Writer, exit func(int)) (context.Context, func()) {
	ctx, cancel := context.WithCancel(parent)
	quit := make(chan struct{})
	go func() {
		select {
		case s := <-sigs:
			fmt.Fprintf(errw, "\n%v: stopping sends, cancelling requests in flight and writing the files (again to exit at once)\n", s)
			cancel()
		case <-quit:
			return
		}
		select {
		case <-sigs:
			exit(ExitCode)
		case <-quit:
		}
	}()
	return ctx, func() { close(quit); cancel() }
}
