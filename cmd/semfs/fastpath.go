package main

import (
	"fmt"
	"strings"
)

// fastPaths says whether the NFS server answers its hot requests itself
// (nfs/fastpath.go) instead of leaving every request to go-nfs. 9P has one
// route (ninep/fast.go): its words are gone.
type fastPaths struct{ nfs bool }

// parseFastPath reads --fast-path: "on", "off", or a comma list of "nfs-off"
// and "nfs-on", applied in order to on. Anything else is an error naming the
// word; "9p-off" and "9p-on" name why they went.
func parseFastPath(v string) (fastPaths, error) {
	f := fastPaths{nfs: true}
	for _, w := range strings.Split(v, ",") {
		switch w = strings.TrimSpace(w); w {
		case "on", "nfs-on":
			f.nfs = true
		case "off", "nfs-off":
			f.nfs = false
		case "9p-off", "9p-on":
			return fastPaths{}, fmt.Errorf("%q: 9P has one route now (the connection shim in front of p9), nothing to turn off", w)
		default:
			return fastPaths{}, fmt.Errorf("%q: want on, off, or a comma list of nfs-off, nfs-on", w)
		}
	}
	return f, nil
}
