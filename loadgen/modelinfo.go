package loadgen

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/simbench/simbench/results"
)

// ModelInfo is what a server says about the model it serves: Ollama's
// /api/show reports the GGUF architecture metadata (model_info) and the
// weights' quantisation.
type ModelInfo struct {
	Architecture string             // general.architecture, e.g. "llama"
	Numbers      map[string]float64 // numeric model_info keys, e.g. "llama.block_count"
	Quantization string             // e.g. "F16", "Q4_K_M"
	NumThread    int                // the Modelfile's num_thread: the runner's compute threads; 0 = not set
}

// Number returns a numeric metadata key.
func (m *ModelInfo) Number(key string) (float64, bool) {
	v, ok := m.Numbers[key]
	return v, ok
}

// FetchModelInfo asks the server at e.URL what e.Model is, with Ollama's
// POST /api/show. ok is false (and err nil) when the server does not
// answer that API (not Ollama), so callers fall back to what they know.
func FetchModelInfo(ctx context.Context, client *http.Client, e *Endpoint) (info *ModelInfo, ok bool, err error) {
	showURL, err := apiURL(e.URL, "/api/show")
	if err != nil {
		return nil, false, err
	}
	body, err := json.Marshal(map[string]string{"model": e.Model})
	if err != nil {
		return nil, false, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, showURL, bytes.NewReader(body))
	if err != nil {
		return nil, false, err
	}
	req.Header.Set("Content-Type", "application/json")
	if e.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+e.APIKey)
	}
	for name, values := range e.header() {
		req.Header[name] = values
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, false, fmt.Errorf("%s: %w", results.RedactURL(showURL), err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
		return nil, false, nil
	}
	info, err = parseShow(resp.Body)
	if err != nil {
		return nil, false, fmt.Errorf("%s: %w", results.RedactURL(showURL), err)
	}
	return info, info.Architecture != "", nil
}

func parseShow(r io.Reader) (*ModelInfo, error) {
	var show struct {
		Details struct {
			Quantization string `json:"quantization_level"`
		} `json:"details"`
		ModelInfo  map[string]json.RawMessage `json:"model_info"`
		Parameters string                     `json:"parameters"`
	}
	if err := json.NewDecoder(io.LimitReader(r, 64<<20)).Decode(&show); err != nil {
		return nil, fmt.Errorf("decoding /api/show: %w", err)
	}
	info := &ModelInfo{Numbers: map[string]float64{}, Quantization: show.Details.Quantization}
	n, err := numThread(show.Parameters)
	if err != nil {
		return nil, fmt.Errorf("/api/show parameters: %w", err)
	}
	info.NumThread = n
	for k, raw := range show.ModelInfo {
		var f float64
		if json.Unmarshal(raw, &f) == nil {
			info.Numbers[k] = f
			continue
		}
		var s string
		if k == "general.architecture" && json.Unmarshal(raw, &s) == nil {
			info.Architecture = s
		}
	}
	return info, nil
}

// numThread is the num_thread of Ollama's parameters text (one
// "name value" line per Modelfile PARAMETER); 0 when it is not set.
func numThread(params string) (int, error) {
	for _, line := range strings.Split(params, "\n") {
		f := strings.Fields(line)
		if len(f) != 2 || f[0] != "num_thread" {
			continue
		}
		n, err := strconv.Atoi(f[1])
		if err != nil || n < 0 {
			return 0, fmt.Errorf("num_thread %q: want a count of threads", f[1])
		}
		return n, nil
	}
	return 0, nil
}

// apiURL joins the server's base URL (scheme optional, a trailing /v1
// dropped) with path.
func apiURL(base, path string) (string, error) {
	b := strings.TrimSpace(base)
	if !strings.Contains(b, "://") {
		b = "http://" + b
	}
	u, err := url.Parse(b)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("--url %q: want [http[s]://]host[:port]", results.RedactURL(base))
	}
	u.Path = strings.TrimSuffix(strings.TrimRight(u.Path, "/"), "/v1") + path
	return u.String(), nil
}
