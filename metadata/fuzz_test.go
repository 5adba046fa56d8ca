package metadata

import (
	"encoding/json"
	"testing"
)

// FuzzParseText feeds arbitrary text to every parser of user input and
// stored names: each must return a value or an error, never panic, and a
// value must render back to a valid partition value.
func FuzzParseText(f *testing.F) {
	for _, s := range []string{"", "1", "-0.5e3", "2026-01-02", "12:34:56.789", "2026-01-02T03:04:05+05:00",
		"12-34-56_789", "2026-01-02-03-04-05_1", "NaN", "-Inf", "1_5E-4", "ff00", "__x", "9999999999999999999999"} {
		f.Add(s)
	}
	types := everyType()
	f.Fuzz(func(t *testing.T, s string) {
		for _, typ := range types {
			_, _ = CoerceValue(typ, s)
			if PartitionTypeAllowed(typ) {
				if v, err := ParsePartitionValue(typ, s); err == nil {
					_, _ = PartitionValueString(typ, v)
				}
			}
		}
		_, _ = ParseDecimal(s, 38, 10)
		_, _ = ParseDuration(s)
		var d DataType
		_ = json.Unmarshal([]byte(s), &d)
	})
}
