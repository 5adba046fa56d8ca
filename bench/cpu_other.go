//go:build !unix

package main

import "time"

// processCPU needs getrusage, which only Unix systems give.
func processCPU() (time.Duration, error) {
	return 0, naError{"process CPU time is measured on Unix systems only"}
}
