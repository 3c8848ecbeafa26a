package peerruns

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
)

// readJSON decodes the JSON file at path into v; errors name the file, the
// line and the field.
func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return decodeJSON(path, b, v)
}

func decodeJSON(name string, b []byte, v any) error {
	err := json.Unmarshal(b, v)
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &te):
		return fmt.Errorf("%s:%d: field %q: %s is not a %s", name, lineAt(b, te.Offset), te.Field, te.Value, te.Type)
	case errors.As(err, &se):
		return fmt.Errorf("%s:%d: malformed JSON: %w", name, lineAt(b, se.Offset), err)
	case err != nil:
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// lineAt is the 1-based line of byte offset off.
func lineAt(b []byte, off int64) int {
	off = min(max(off, 0), int64(len(b)))
	return bytes.Count(b[:off], []byte("\n")) + 1
}

// missing is the error for a required field a file does not have.
func missing(name, field string) error {
	return fmt.Errorf("%s: field %q is missing", name, field)
}
