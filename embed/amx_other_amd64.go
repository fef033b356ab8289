//go:build !linux

package embed

// amxUsable is false off Linux: the tile state needs the kernel's per-process
// grant, which this package asks for only on Linux.
func amxUsable() bool { return false }
