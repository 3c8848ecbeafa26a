package traces

import (
	"fmt"
	"reflect"
	"strings"
)

// SpecFlag is the command-line flag of a Spec key: the key with "-" for
// "_" (request_count: request-count).
func SpecFlag(key string) string { return strings.ReplaceAll(key, "_", "-") }

// SpecFromFlags is the Spec of the workload flags given: isSet reports
// whether a flag (named by SpecFlag) was given, value returns its value,
// of the key's type (string, bool, int, int64 or float64).
func SpecFromFlags(isSet func(flag string) bool, value func(flag string) any) (Spec, error) {
	var s Spec
	v := reflect.ValueOf(&s).Elem()
	for i := range v.NumField() {
		name := SpecFlag(SpecKey(i))
		if !isSet(name) {
			continue
		}
		f := v.Field(i)
		x := reflect.ValueOf(value(name))
		if !x.IsValid() || x.Type() != f.Type().Elem() {
			return s, fmt.Errorf("--%s: want a %s, got %T", name, f.Type().Elem(), value(name))
		}
		p := reflect.New(f.Type().Elem())
		p.Elem().Set(x)
		f.Set(p)
	}
	return s, nil
}
