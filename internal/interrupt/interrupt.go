// Package interrupt turns SIGINT and SIGTERM into a cancelled context: the
// first signal cancels (the command stops sending and writes its files),
// a second one more than Grace later exits at once, with ForcedExitCode:
// the files are then not complete. A second signal within Grace of the
// first is the same stop said twice (`timeout` signals the process and
// then its group; a terminal's Ctrl-C reaches every process of the job)
// and is ignored.
package interrupt

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// ExitCode is the exit code of a command stopped by a signal (128 +
// SIGINT).
const ExitCode = 130

// ForcedExitCode is the exit code of a command made to exit before its
// files were written: not 130, which promises complete files.
const ForcedExitCode = 1

// Grace is how long after the first signal a second one is taken as the
// same request to stop.
const Grace = time.Second

// Context is cancelled by the first SIGINT/SIGTERM; a second one more
// than Grace later calls exit(ForcedExitCode) at once. stop ends the watch.
func Context(parent context.Context, errw io.Writer, exit func(int)) (ctx context.Context, stop func()) {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	ctx, stopWatch := Watch(parent, sigs, errw, exit, time.Now)
	return ctx, func() { signal.Stop(sigs); stopWatch() }
}

// Watch cancels the returned context at the first value on sigs and calls
// exit(ForcedExitCode) at the first one after it that comes Grace or more
// later by now. stop ends the watch.
func Watch(parent context.Context, sigs <-chan os.Signal, errw io.Writer, exit func(int), now func() time.Time) (context.Context, func()) {
	ctx, cancel := context.WithCancel(parent)
	quit := make(chan struct{})
	go func() {
		var first time.Time
		select {
		case s := <-sigs:
			first = now()
			fmt.Fprintf(errw, "\n%v: stopping sends, cancelling requests in flight and writing the files (again to exit at once)\n", s)
			cancel()
		case <-quit:
			return
		}
		for {
			select {
			case <-sigs:
				if now().Sub(first) < Grace {
					continue // the same stop, delivered twice
				}
				fmt.Fprintln(errw, "second signal: exiting before the files are complete")
				exit(ForcedExitCode)
				return
			case <-quit:
				return
			}
		}
	}()
	return ctx, func() { close(quit); cancel() }
}
