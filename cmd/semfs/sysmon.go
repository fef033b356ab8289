//go:build linux

package main

import (
	"os"

	"github.com/semfs/semfs/server/sysmon"
)

// envSysmonHold set to "off" runs the daemon without the sysmon hold, for
// same-binary A/B runs (integration/bench); it is not a setting users need.
const envSysmonHold = "SEMFS_SYSMON_HOLD"

// processTuning applies what belongs to the daemon's process as a whole, not
// to one daemon value (tests run several daemons in one process through run):
// the sysmon hold (server/sysmon), for `semfs serve` only. It returns what
// undoes it.
func processTuning(args []string) (release func()) {
	if len(args) == 0 || args[0] != "serve" || os.Getenv(envSysmonHold) == "off" {
		return func() {}
	}
	return sysmon.Start(sysmon.Options{}).Stop
}
