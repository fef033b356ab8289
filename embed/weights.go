package embed

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
)

// tensor is one weight of a TF.js graph model, decoded to float32
// (int32 constants are converted, since the encoder reads only a few sizes).
type tensor struct {
	shape []int
	data  []float32
}

// weightsManifest is the part of a TF.js model.json this package reads.
type weightsManifest struct {
	WeightsManifest []struct {
		Paths   []string `json:"paths"`
		Weights []struct {
			Name  string `json:"name"`
			Shape []int  `json:"shape"`
			Dtype string `json:"dtype"`
		} `json:"weights"`
	} `json:"weightsManifest"`
}

// loadWeights reads dir/model.json and the shard files it names. Each
// manifest group's shards are one little-endian byte stream holding its
// weights back to back, in manifest order.
func loadWeights(dir string) (map[string]tensor, error) {
	const op = "load weights"
	manifest := filepath.Join(dir, "model.json")
	b, err := os.ReadFile(manifest)
	if err != nil {
		return nil, fileError(op, manifest, err)
	}
	var m weightsManifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, errorf(op, KindModelInvalid, manifest, "%v", err)
	}
	out := make(map[string]tensor)
	for _, g := range m.WeightsManifest {
		// Size the group's buffer first: the shards are 27 MB together, and
		// growing by append would copy them several times.
		size := int64(0)
		for _, p := range g.Paths {
			// Shard names come from the file; refuse any that would leave dir.
			if !filepath.IsLocal(p) {
				return nil, errorf(op, KindModelInvalid, manifest, "shard path %q leaves the model directory", p)
			}
			fi, err := os.Stat(filepath.Join(dir, p))
			if err != nil {
				return nil, fileError(op, filepath.Join(dir, p), err)
			}
			size += fi.Size()
		}
		buf := make([]byte, 0, size)
		for _, p := range g.Paths {
			d, err := os.ReadFile(filepath.Join(dir, p))
			if err != nil {
				return nil, fileError(op, filepath.Join(dir, p), err)
			}
			buf = append(buf, d...)
		}
		off := 0
		for _, w := range g.Weights {
			n := 1
			for _, s := range w.Shape {
				if s < 0 || (s > 0 && n > math.MaxInt32/s) {
					return nil, errorf(op, KindModelInvalid, manifest, "weight %s: bad shape %v", w.Name, w.Shape)
				}
				n *= s
			}
			if w.Dtype != "float32" && w.Dtype != "int32" {
				return nil, errorf(op, KindModelInvalid, manifest, "weight %s: unsupported dtype %q", w.Name, w.Dtype)
			}
			if len(buf)-off < 4*n {
				return nil, errorf(op, KindModelInvalid, manifest, "shards end inside weight %s", w.Name)
			}
			v := make([]float32, n)
			for i := range v {
				u := binary.LittleEndian.Uint32(buf[off+4*i:])
				if w.Dtype == "int32" {
					v[i] = float32(int32(u))
				} else {
					v[i] = math.Float32frombits(u)
				}
			}
			off += 4 * n
			out[w.Name] = tensor{shape: w.Shape, data: v}
		}
	}
	return out, nil
}

// fileError classifies a failure to read a model file.
func fileError(op, path string, err error) error {
	kind := KindModelInvalid
	if errors.Is(err, fs.ErrNotExist) {
		kind = KindModelMissing
	}
	// The path is already in the Error; keep only the cause ("no such file
	// or directory") so the message names it once.
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return &Error{Op: op, Kind: kind, Path: path, Err: err}
}
