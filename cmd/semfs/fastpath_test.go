package main

import "testing"

func TestParseFastPath(t *testing.T) {
	for in, want := range map[string]fastPaths{
		"on":          {nfs: true},
		"off":         {},
		"nfs-off":     {},
		"off, nfs-on": {nfs: true},
	} {
		got, err := parseFastPath(in)
		if err != nil || got != want {
			t.Errorf("%q: %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "yes", "nfs", "on,bogus", "9p-off", "nfs-off,9p-off", "9p-on"} {
		if _, err := parseFastPath(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
