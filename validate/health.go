package validate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	neturl "net/url"
	"os"
	"strings"
	"time"

	"github.com/simbench/simbench/realrun"
	"github.com/simbench/simbench/results"
)

// defaultHealthTimeout bounds the health check when the pipeline sets none.
const defaultHealthTimeout = 10 * time.Second

// healthCheck GETs the target's health path and wants a 2xx answer.
func (v *validation) healthCheck(ctx context.Context) error {
	t := v.p.Target
	if t.HealthCheck == "" || t.HealthCheck == "none" {
		return nil
	}
	target := healthURL(t.URL, t.HealthCheck)
	timeout := defaultHealthTimeout
	if t.HealthTimeoutSeconds > 0 {
		timeout = realrun.Seconds(t.HealthTimeoutSeconds)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return fmt.Errorf("health check: target.url %q: %w", results.RedactURL(t.URL), err)
	}
	if key := v.p.Target.apiKey(); key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if ue := (*neturl.Error)(nil); errors.As(err, &ue) {
		err = ue.Err // the URL is in our message already
	}
	if err != nil {
		return fmt.Errorf("health check: GET %s: %w (is the target up? target.health_check: none skips the check)", target, err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("health check: GET %s: %s (want a 2xx status)", target, resp.Status)
	}
	v.logf("health check: GET %s: %s", target, resp.Status)
	return nil
}

// healthURL joins the base URL (scheme optional, as for simbench run) and
// the health path.
func healthURL(base, path string) string {
	base = strings.TrimRight(strings.TrimSpace(base), "/")
	if !strings.Contains(base, "://") {
		base = "http://" + base
	}
	return base + path
}

// apiKey is the value of the environment variable target.api_key_env
// names; it is passed to the run in-process and never written anywhere.
func (t TargetSection) apiKey() string {
	if name := t.APIKeyEnv; name != "" {
		return os.Getenv(name)
	}
	return ""
}
