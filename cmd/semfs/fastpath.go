package main

import (
	"fmt"
	"strings"
)

// fastPaths says which protocol servers answer their hot requests themselves
// (nfs/fastpath.go, ninep/fast.go) instead of leaving every request to go-nfs
// and p9.
type fastPaths struct{ nfs, ninep bool }

// parseFastPath reads --fast-path: "on" (both), "off" (neither), or a comma
// list of "nfs-off", "9p-off" (and "nfs-on", "9p-on"), applied in order to
// both on. Anything else is an error naming the word.
func parseFastPath(v string) (fastPaths, error) {
	f := fastPaths{nfs: true, ninep: true}
	for _, w := range strings.Split(v, ",") {
		switch strings.TrimSpace(w) {
		case "on":
			f = fastPaths{nfs: true, ninep: true}
		case "off":
			f = fastPaths{}
		case "nfs-off":
			f.nfs = false
		case "nfs-on":
			f.nfs = true
		case "9p-off":
			f.ninep = false
		case "9p-on":
			f.ninep = true
		default:
			return fastPaths{}, fmt.Errorf("%q: want on, off, or a comma list of nfs-off, 9p-off", w)
		}
	}
	return f, nil
}
