//go:build race

package tiering

// raceEnabled is whether the race detector is on: tests that encode
// many Parquet files run a smaller sample then.
const raceEnabled = true
