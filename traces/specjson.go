package traces

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// JSON is the spec as a JSON object with its keys (the flags given, nil
// ones left out): what a run records in input_config.workload.spec to be
// built again.
func (s Spec) JSON() (json.RawMessage, error) {
	b, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("workload spec: %w", err)
	}
	return b, nil
}

// BuildJSON builds again the workload of a spec Spec.JSON wrote (an
// unknown key is an error); fillSeconds is Build's.
func BuildJSON(b []byte, fillSeconds float64) (*Workload, error) {
	var s Spec
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("workload spec: %w", err)
	}
	wl, _, err := s.Build(fillSeconds)
	return wl, err
}
