package warning

import (
	"encoding/json"
	"errors"
)

// Of turns a slice of a warning type into the one shape, []error; nil
// stays nil.
func Of[T error](ws []T) []error {
	if ws == nil {
		return nil
	}
	out := make([]error, len(ws))
	for i, w := range ws {
		out[i] = w
	}
	return out
}

// List is warnings kept in a JSON document: written as an array of their
// messages, read back as errors with those messages.
type List []error

// MarshalJSON writes the messages; a nil List is null.
func (l List) MarshalJSON() ([]byte, error) {
	if l == nil {
		return []byte("null"), nil
	}
	msgs := make([]string, len(l))
	for i, e := range l {
		msgs[i] = e.Error()
	}
	return json.Marshal(msgs)
}

// UnmarshalJSON reads an array of messages.
func (l *List) UnmarshalJSON(b []byte) error {
	var msgs []string
	if err := json.Unmarshal(b, &msgs); err != nil {
		return err
	}
	if msgs == nil {
		*l = nil
		return nil
	}
	*l = make(List, len(msgs))
	for i, m := range msgs {
		(*l)[i] = errors.New(m)
	}
	return nil
}

// Unique drops the warnings whose message an earlier one already has.
func Unique(ws []error) []error {
	seen := map[string]bool{}
	var out []error
	for _, w := range ws {
		if msg := w.Error(); !seen[msg] {
			seen[msg] = true
			out = append(out, w)
		}
	}
	return out
}

// Messages are the warnings' texts, for tests and text reports.
func Messages(ws []error) []string {
	if ws == nil {
		return nil
	}
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.Error()
	}
	return out
}
