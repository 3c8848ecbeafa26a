package loadgen

import (
	"fmt"
	"time"
)

// String is the snapshot as one progress line: done / in flight / errors /
// achieved rate / ETA.
func (p Progress) String() string {
	secs := p.Elapsed.Seconds()
	rate := 0.0
	if secs > 0 {
		rate = float64(p.Done) / secs
	}
	eta := "?"
	switch left := int64(p.Total) - p.Done; {
	case p.Duration > 0:
		eta = max(p.Duration-p.Elapsed, 0).Round(time.Second).String()
	case left <= 0:
		eta = "0s"
	case rate > 0:
		eta = time.Duration(float64(left) / rate * float64(time.Second)).Round(time.Second).String()
	}
	return fmt.Sprintf("%d/%d done, %d in flight, %d errors, %.1f req/s, elapsed %.1fs, ETA %s",
		p.Done, p.Total, p.InFlight, p.Errors, rate, secs, eta)
}
