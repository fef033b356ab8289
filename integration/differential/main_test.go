package differential_test

import (
	"os"
	"testing"

	"github.com/semfs/semfs/integration/semfstest"
)

// TestMain removes the daemon binary the tests built (semfstest.Main).
func TestMain(m *testing.M) { os.Exit(semfstest.Main(m)) }
