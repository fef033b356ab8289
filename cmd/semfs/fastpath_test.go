package main

import "testing"

func TestParseFastPath(t *testing.T) {
	for in, want := range map[string]fastPaths{
		"on":          {ninep: true},
		"off":         {},
		"9p-off":      {},
		"off, 9p-on":  {ninep: true},
		"9p-off,on":   {ninep: true},
		"on , 9p-off": {},
	} {
		got, err := parseFastPath(in)
		if err != nil || got != want {
			t.Errorf("%q: %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "yes", "nfs", "on,bogus", "nfs-off", "nfs-on", "nfs-off,9p-off"} {
		if _, err := parseFastPath(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
