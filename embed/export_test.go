package embed

// LoadUSELiteFP32 loads the model with every product in fp32, whatever the
// CPU offers: the reference the bf16 tile kernel is checked against.
func LoadUSELiteFP32(dir string) (*USELite, error) { return loadUSELiteWith(dir, kernFP32) }

// BF16Kernels names the bf16 kernels this CPU can run ("amx",
// "avx512-bf16", "bf16-weights").
func BF16Kernels() []string {
	var ks []string
	if useAMX {
		ks = append(ks, "amx")
	}
	if useBF16 {
		ks = append(ks, "avx512-bf16")
	}
	if useBF16W {
		ks = append(ks, "bf16-weights")
	}
	return ks
}

// LoadUSELiteKernel loads the model on the named kernel ("fp32", "amx",
// "avx512-bf16", "bf16-weights"), which the caller has checked this CPU can
// run.
func LoadUSELiteKernel(dir, name string) (*USELite, error) {
	return loadUSELiteWith(dir, map[string]kernel{"fp32": kernFP32, "amx": kernAMX, "avx512-bf16": kernBF16, "bf16-weights": kernBF16W}[name])
}

// Queued is how many callers wait in c for a joined call.
func (c *Coalescer) Queued() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.queue)
}
