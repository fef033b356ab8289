package embed

// LoadUSELiteFP32 loads the model with every product in fp32, whatever the
// CPU offers: the reference the bf16 tile kernel is checked against.
func LoadUSELiteFP32(dir string) (*USELite, error) { return loadUSELiteWith(dir, false) }

// UsesAMX says whether LoadUSELite picks the bf16 tile kernel here.
func UsesAMX() bool { return useAMX }
