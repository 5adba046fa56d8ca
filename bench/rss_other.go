//go:build !unix

package main

import "os"

// maxRSSKiB needs rusage, which only Unix systems give.
func maxRSSKiB(*os.ProcessState) (int64, error) {
	return 0, naError{"peak RSS is measured on Unix systems only"}
}
