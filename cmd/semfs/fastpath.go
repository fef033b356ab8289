package main

import (
	"fmt"
	"strings"
)

// fastPaths says whether the 9P server answers its hot requests itself
// (ninep/fast.go) instead of leaving every request to p9. NFS has no such
// switch: the adapter's answer is the only one for the procedures it answers
// (nfs/fastpath.go, issue 30).
type fastPaths struct{ ninep bool }

// parseFastPath reads --fast-path: "on", "off", or a comma list of "9p-off"
// and "9p-on", applied in order to on. "nfs-off" and "nfs-on" are refused
// with the reason; anything else is an error naming the word.
func parseFastPath(v string) (fastPaths, error) {
	f := fastPaths{ninep: true}
	for _, w := range strings.Split(v, ",") {
		switch w = strings.TrimSpace(w); w {
		case "on", "9p-on":
			f.ninep = true
		case "off", "9p-off":
			f.ninep = false
		case "nfs-off", "nfs-on":
			return fastPaths{}, fmt.Errorf("%q: NFS has one route for every procedure, there is nothing to switch (issue 30)", w)
		default:
			return fastPaths{}, fmt.Errorf("%q: want on, off, or a comma list of 9p-off, 9p-on", w)
		}
	}
	return f, nil
}
