package main

import "testing"

func TestParseFastPath(t *testing.T) {
	for in, want := range map[string]fastPaths{
		"on":             {nfs: true, ninep: true},
		"off":            {},
		"nfs-off":        {ninep: true},
		"9p-off":         {nfs: true},
		"nfs-off,9p-off": {},
		"off, 9p-on":     {ninep: true},
	} {
		got, err := parseFastPath(in)
		if err != nil || got != want {
			t.Errorf("%q: %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "yes", "nfs", "on,bogus"} {
		if _, err := parseFastPath(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
