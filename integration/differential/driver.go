package differential

import (
	"fmt"
	"strings"
	"time"
)

// Pair is semfs and its peer through one protocol's client. Each function
// makes a new, empty base directory named base on its server and returns a
// target acting below it, so every sequence (and every replay while
// shrinking) starts from empty trees without restarting a server.
type Pair struct {
	Proto string // "nfs" or "9p"
	Semfs func(base string) (Target, error)
	Peer  func(base string) (Target, error)
	// Normalize rewrites what a step answered and what the tree holds, on
	// both sides alike, to drop what may lawfully differ (the accepted
	// differences of the package doc); nil compares everything.
	Normalize func(op Op, r *Result, t Tree)
	// Skip leaves out a generated step, given the tree the peer showed
	// before it: the steps that would only show a known failure again
	// (KnownFailures), so the rest of the sequence still runs.
	Skip func(op Op, peer Tree) bool
}

// Run runs ops on fresh bases named base and returns the differences of
// the first step at which the two servers disagree, or none, with the steps
// it ran up to that one (those Skip did not leave out).
func (p Pair) Run(base string, ops []Op) ([]Difference, []Op, error) {
	var ran []Op
	diffs, err := p.run(base, ops, &ran)
	return diffs, ran, err
}

func (p Pair) run(base string, ops []Op, ran *[]Op) ([]Difference, error) {
	a, err := p.Semfs(base)
	if err != nil {
		return nil, fmt.Errorf("semfs base: %w", err)
	}
	b, err := p.Peer(base)
	if err != nil {
		return nil, fmt.Errorf("peer base: %w", err)
	}
	peerTree, err := b.Snapshot()
	if err != nil {
		return nil, fmt.Errorf("peer tree: %w", err)
	}
	for _, op := range ops {
		if p.Skip != nil && p.Skip(op, peerTree) {
			continue
		}
		i := len(*ran)
		*ran = append(*ran, op)
		ra, err := a.Do(op)
		if err != nil {
			return nil, fmt.Errorf("semfs step %d (%s): %w", i, op, err)
		}
		rb, err := b.Do(op)
		if err != nil {
			return nil, fmt.Errorf("peer step %d (%s): %w", i, op, err)
		}
		ta, err := a.Snapshot()
		if err != nil {
			return nil, fmt.Errorf("semfs tree after step %d (%s): %w", i, op, err)
		}
		tb, err := b.Snapshot()
		if err != nil {
			return nil, fmt.Errorf("peer tree after step %d (%s): %w", i, op, err)
		}
		peerTree = tb
		if p.Normalize != nil {
			p.Normalize(op, &ra, ta)
			p.Normalize(op, &rb, tb)
		}
		var diffs []Difference
		if ra.Status != rb.Status {
			diffs = append(diffs, Difference{Step: i, Op: op, What: "status", Semfs: ra.String(), Peer: rb.String()})
		} else if ra.Detail != rb.Detail {
			diffs = append(diffs, Difference{Step: i, Op: op, What: "detail", Semfs: ra.String(), Peer: rb.String()})
		}
		diffs = append(diffs, compareTrees(i, op, ta, tb)...)
		if len(diffs) > 0 {
			return diffs, nil
		}
	}
	return nil, nil
}

// Shrink returns a shortest sequence it finds, by removing steps from ops
// (whose last step is the first to differ), on which the servers still
// disagree as same(diffs) says, replaying each candidate on new bases named
// from base. It stops after budget, returning the best found so far.
func (p Pair) Shrink(base string, ops []Op, same func([]Difference) bool, budget time.Duration) ([]Op, []Difference, error) {
	deadline := time.Now().Add(budget)
	best := ops
	bestDiffs, best, err := p.Run(fmt.Sprintf("%s-0", base), best)
	if err != nil || !same(bestDiffs) {
		return best, bestDiffs, err
	}
	try := 1
	// Remove chunks of halving size (ddmin's complement step), keeping the
	// last step: it is where the difference shows.
	for chunk := len(best) / 2; chunk >= 1; {
		removed := false
		for start := 0; start+chunk < len(best) && time.Now().Before(deadline); {
			cand := append(append([]Op(nil), best[:start]...), best[start+chunk:]...)
			diffs, ran, err := p.Run(fmt.Sprintf("%s-%d", base, try), cand)
			try++
			if err != nil {
				return best, bestDiffs, err
			}
			if len(diffs) > 0 && same(diffs) {
				// Cut the candidate where it now first differs.
				best, bestDiffs, removed = ran, diffs, true
				continue
			}
			start += chunk
		}
		if !time.Now().Before(deadline) {
			break
		}
		if !removed {
			chunk /= 2
		}
	}
	return best, bestDiffs, nil
}

// Show renders a sequence one step a line, numbered, for a report.
func Show(ops []Op) string {
	var b strings.Builder
	for i, op := range ops {
		fmt.Fprintf(&b, "  %3d  %s\n", i, op)
	}
	return b.String()
}
