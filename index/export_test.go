package index

// Test hooks, compiled only into this package's tests.

// ForceKeywordPlan makes x find keyword hits always through Bleve ("bleve"),
// always by scanning ("scan"), or as the planner decides ("auto"), so the
// property test checks every path against the brute-force scorer.
func ForceKeywordPlan(x *Index, plan string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.plan = map[string]planMode{"auto": planAuto, "bleve": planBleve, "scan": planScan}[plan]
}

// The best rank's calibrated constants, for the property tests' bounds.
const Presence = presence

// FusionLambda is the calibrated weight of meaning for a query whose
// best-covered file has kw kwTop (it only falls as kwTop grows).
func FusionLambda(kwTop float64) float64 {
	return Fusion{Tie: fusionTie, Rescue: fusionRescue, Weak: fusionWeak}.lambda(kwTop)
}
