package server

// UseReadMeta makes ReadMetaEach read each record as ReadMeta does, as on a
// kernel without getxattrat(2), so that tests cover that route too.
func (f *FS) UseReadMeta() { f.noGetxattrat.Store(true) }
