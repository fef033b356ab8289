package nfs

import (
	"fmt"
	"math/rand"
	"path/filepath"
	"sync"
	"testing"

	"github.com/tidwall/buntdb"
)

// The node cache in front of buntdb never answers other than buntdb would:
// after concurrent puts, putAlls, dels and reads, past its bound, every node it
// holds is buntdb's, and the map reopened from disk has every write.
func TestNodeCacheAgreesWithBuntdb(t *testing.T) {
	path := filepath.Join(t.TempDir(), handleDBName)
	m, err := loadHandleMap(path)
	if err != nil {
		t.Fatal(err)
	}
	m.nodes.max = 8 // far fewer than the inodes used: it empties and refills
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			rng := rand.New(rand.NewSource(int64(w)))
			for i := 0; i < 3000; i++ {
				ino := uint64(1 + rng.Intn(20))
				n := node{parent: uint64(rng.Intn(3)), gen: uint64(rng.Intn(2)), name: fmt.Sprintf("n%d", rng.Intn(4))}
				switch r := rng.Intn(10); {
				case r < 4:
					if err := m.put(ino, n); err != nil {
						t.Error(err)
						return
					}
				case r < 5:
					if err := m.putAll([]uint64{ino, ino%20 + 1}, []node{n, {parent: 1, name: "x"}}); err != nil {
						t.Error(err)
						return
					}
				case r < 6:
					m.del(ino)
				default:
					m.get(ino)
					m.path(ino)
				}
			}
		}(w)
	}
	wg.Wait()
	want := map[uint64]node{}
	_ = m.db.View(func(tx *buntdb.Tx) error {
		for ino := uint64(1); ino <= 20; ino++ {
			if n, ok := getNode(tx, ino); ok {
				want[ino] = n
			}
		}
		return nil
	})
	m.nodes.mu.Lock()
	for ino, n := range m.nodes.m {
		if w, ok := want[ino]; !ok || w != n {
			t.Errorf("inode %d: cache %+v, buntdb %+v (present %v)", ino, n, w, ok)
		}
	}
	m.nodes.mu.Unlock()
	for ino := uint64(1); ino <= 20; ino++ {
		n, ok := m.get(ino)
		if w, wok := want[ino]; ok != wok || n != w {
			t.Errorf("get(%d) = %+v %v, buntdb %+v %v", ino, n, ok, w, wok)
		}
	}
	if err := m.close(); err != nil {
		t.Fatal(err)
	}
	m2, err := loadHandleMap(path)
	if err != nil {
		t.Fatal(err)
	}
	defer m2.close()
	for ino := uint64(1); ino <= 20; ino++ {
		n, ok := m2.get(ino)
		if w, wok := want[ino]; ok != wok || n != w {
			t.Errorf("reopened: get(%d) = %+v %v, want %+v %v", ino, n, ok, w, wok)
		}
	}
}
