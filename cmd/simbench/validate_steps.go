package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	neturl "net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/simbench/simbench/realrun"

	"github.com/simbench/simbench/sim"
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
		return fmt.Errorf("health check: target.url %q: %w", t.URL, err)
	}
	if key := v.apiKey(); key != "" {
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
func (v *validation) apiKey() string {
	if name := v.p.Target.APIKeyEnv; name != "" {
		return os.Getenv(name)
	}
	return ""
}

// runArgs are the `simbench run` arguments of a silicon run into dir.
func (v *validation) runArgs(dir string) ([]string, error) {
	t := v.p.Target
	args := []string{"simbench", "run", "-o", dir, "--url", t.URL, "--model", t.Model}
	if t.EndpointType != "" {
		args = append(args, "--endpoint-type", t.EndpointType)
	}
	if t.Endpoint != "" {
		args = append(args, "--endpoint", t.Endpoint)
	}
	for _, f := range []struct {
		on   bool
		flag string
	}{{t.UseLegacyMaxTokens, "--use-legacy-max-tokens"}, {t.UseServerTokenCount, "--use-server-token-count"}, {v.quiet, "--quiet"}} {
		if f.on {
			args = append(args, f.flag)
		}
	}
	args = appendFloatFlag(args, "--request-timeout-seconds", t.RequestTimeoutSeconds)
	args = appendFloatFlag(args, "--benchmark-grace-period", t.BenchmarkGracePeriod)
	if t.MaxErrorRate != "" {
		args = append(args, "--max-error-rate", t.MaxErrorRate)
	}
	extra, err := t.extraInputArgs()
	if err != nil {
		return nil, err
	}
	args = append(args, extra...)
	if key := v.apiKey(); key != "" {
		args = append(args, "--api-key", key)
	}
	return append(args, v.p.workloadArgs()...), nil
}

func appendFloatFlag(args []string, flag string, v *float64) []string {
	if v == nil {
		return args
	}
	return append(args, flag, strconv.FormatFloat(*v, 'g', -1, 64))
}

// simArgs are the `simbench sim` arguments of a simulated run into dir;
// seed, when not nil, is the simulator's own seed (the workload's stays).
func (v *validation) simArgs(dir string, seed *int64) []string {
	args := []string{"simbench", "sim", "-o", dir, "--config", v.simConfigPath()}
	if v.quiet {
		args = append(args, "--quiet")
	}
	if seed != nil {
		args = append(args, "--sim-seed", strconv.FormatInt(*seed, 10))
	}
	return append(args, v.p.workloadArgs()...)
}

// simConfigPath is OUTPUT/sim.yaml: the configuration every simulated run
// of the pipeline uses (a copy of sim.config, or the calibrated one).
func (v *validation) simConfigPath() string { return filepath.Join(v.out, "sim.yaml") }

// prepareSimConfig writes OUTPUT/sim.yaml: the calibration when it comes
// from a given run directory, else a copy of sim.config. A calibration on
// this pipeline's silicon run happens later (calibrateOn).
func (v *validation) prepareSimConfig(ctx context.Context) error {
	s := v.p.Sim
	if s.Calibrate && s.CalibrateFrom != calibrateFromSilicon {
		return v.calibrateOn(ctx, v.p.resolve(s.CalibrateFrom))
	}
	if s.Calibrate {
		return nil
	}
	b, err := os.ReadFile(v.p.resolve(s.Config))
	if err != nil {
		return usagef("sim.config: %v", err)
	}
	if _, err := sim.ParseConfig(b); err != nil {
		return usagef("sim.config %s: %v", s.Config, err)
	}
	return os.WriteFile(v.simConfigPath(), b, 0o644)
}

// calibrateOn fits the simulator to the real run in dir (simbench
// calibrate, on sim.config as base when given) into OUTPUT/sim.yaml; the
// fit report goes to OUTPUT/logs/calibrate.txt.
func (v *validation) calibrateOn(ctx context.Context, dir string) error {
	args := []string{"simbench", "calibrate", "--real", dir, "-o", v.simConfigPath()}
	if c := v.p.Sim.Config; c != "" {
		args = append(args, "--config", v.p.resolve(c))
	}
	if n := v.p.Sim.MaxEvals; n > 0 {
		args = append(args, "--max-evals", strconv.Itoa(n))
	}
	v.logf("calibrating the simulator on %s → %s", dir, v.simConfigPath())
	if err := v.sub(ctx, "calibrate", args); err != nil {
		return fmt.Errorf("calibration on %s: %w", dir, err)
	}
	return nil
}

// simSeedBase is the simulator seed of the first repeated run: the
// workload's random_seed when set (as `simbench sim` uses it), else the
// configuration's seed.
func (v *validation) simSeedBase() (int64, error) {
	if s := v.p.Workload.RandomSeed; s != nil {
		return *s, nil
	}
	cfg, err := sim.LoadConfig(v.simConfigPath())
	if err != nil {
		return 0, err
	}
	return cfg.Seed, nil
}

// sub runs a simbench sub-command in-process; its standard output goes to
// OUTPUT/logs/NAME.txt, its standard error (progress) to ours.
func (v *validation) sub(ctx context.Context, name string, args []string) (err error) {
	logs := filepath.Join(v.out, "logs")
	if err := os.MkdirAll(logs, 0o755); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(logs, name+".txt"))
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	return newApp(f, v.stderr).RunContext(ctx, args)
}
