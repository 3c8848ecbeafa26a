package jsonlex

import "bytes"

// Names lists the JSON member names of one struct, in field order, so that
// a field is known by its index.
type Names []string

// Seen records which of a Names' members an object gave (up to 64).
type Seen uint64

// Has reports whether member i was seen.
func (s Seen) Has(i int) bool { return s&(1<<i) != 0 }

// Once marks member i seen and reports whether it was not seen before.
func (s *Seen) Once(i int) bool {
	if s.Has(i) {
		return false
	}
	*s |= 1 << i
	return true
}

// Member resolves the key of the member at the cursor, from Object, the way
// json.Unmarshal matches a struct's fields. It returns the field's index and
// true for a field seen for the first time; -1 and true for an unknown
// name, whose value it has skipped; and false where a reader that decodes
// exactly as json.Unmarshal should refuse the text: a repeated field
// (json.Unmarshal keeps the last, merging objects), an escaped key, or a
// name that json.Unmarshal might match case-insensitively (ASCII case or
// Unicode folding).
func (l *Lexer) Member(key []byte, names Names, seen *Seen) (int, bool) {
	for f, n := range names { // faster than a map for these few short names
		if string(key) == n {
			if !seen.Once(f) {
				return -1, false
			}
			return f, true
		}
	}
	if !l.keyPlain || !l.keyASCII {
		return -1, false
	}
	for _, n := range names {
		if bytes.EqualFold(key, []byte(n)) {
			return -1, false
		}
	}
	return -1, l.Skip()
}
